// The native build of our core (g++ -O3 -march=native), timed by cpp/bench/attention_bench.cpp,
// for the same shapes as the wasm runs.
import { execFileSync } from 'node:child_process';
import { attentionFlops } from './timing.js';

export function nativeResults(sizes, widths) {
  const dir = 'build/native-bench';
  const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  run('cmake', ['-S', '.', '-B', dir, '-DCMAKE_BUILD_TYPE=Release', '-DATTN_BUILD_TESTS=OFF', '-DATTN_BUILD_BENCH=ON', '-DCMAKE_CXX_FLAGS=-march=native']);
  run('cmake', ['--build', dir, '-j2', '--target', 'attention_bench']);
  const lines = run(`${dir}/attention_bench`, [sizes.join(','), widths.join(',')]).trim().split('\n');
  return lines.map((line) => {
    const { n, d, ms } = JSON.parse(line);
    return { runner: 'ours: native (g++ -march=native)', n, d, ms, gflops: attentionFlops(n, n, d) / ms / 1e6 };
  });
}
