// The native build of our core (g++ -O3 -march=native): cpp/bench/attention_bench.cpp times
// attention for the same shapes as the wasm runs; cpp/bench/model_bench.cpp is the native runner
// of the training-step sections (seq2seq.js, transformer.js).
import { execFileSync } from 'node:child_process';
import { attentionFlops } from '../../../web/shared/timing.js';

const DIR = 'build/native-bench';
const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

/** Configures build/native-bench (Release, -march=native), builds `target`, returns its path. */
export function nativeBench(target) {
  run('cmake', ['-S', '.', '-B', DIR, '-DCMAKE_BUILD_TYPE=Release', '-DATTN_BUILD_TESTS=OFF', '-DATTN_BUILD_BENCH=ON', '-DCMAKE_CXX_FLAGS=-march=native']);
  run('cmake', ['--build', DIR, '-j2', '--target', target]);
  return `${DIR}/${target}`;
}

export function nativeResults(sizes, widths) {
  const lines = run(nativeBench('attention_bench'), [sizes.join(','), widths.join(',')]).trim().split('\n');
  return lines.map((line) => {
    const { n, d, ms } = JSON.parse(line);
    return { runner: 'ours: native (g++ -march=native)', n, d, ms, gflops: attentionFlops(n, n, d) / ms / 1e6 };
  });
}
