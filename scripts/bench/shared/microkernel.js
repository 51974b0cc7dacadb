// The 2x16 GEMM micro-kernel's own throughput, measured in wasm inside this Node process, for the
// ratio SDPA / micro-kernel that `npm run bench` prints: with SIMD128's multiply and add, and
// with relaxed SIMD's fused multiply-add (the same loop, cpp/bench/microkernel_module.cpp). The
// micro-kernel is internal (cpp/src), so the timing code lives in the C++ kernel bench (cpp/bench/kernel_bench.cpp), built with em++
// as a node program (build/bench-wasm-simd, as scripts/bench-kernels.sh builds it) and required
// here with the argument `microkernel`: the shipped package carries no benchmark entry point, and
// the figure comes from the same process, V8 and moment as the SDPA figures beside it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

import { measureInTurns } from '../../../web/shared/timing.js';

const require = createRequire(import.meta.url);
const DIR = 'build/bench-wasm-simd';

const built = new Set();
/** Builds a target of the wasm bench build (build/bench-wasm-simd), once per process. */
export function buildBenchTarget(target) {
  if (built.has(target)) return;
  const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' }; // emcc's JS optimizer needs acorn
  const run = (cmd, args) => execFileSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (!existsSync(`${DIR}/CMakeCache.txt`)) {
    run('emcmake', ['cmake', '-S', '.', '-B', DIR, '-DCMAKE_BUILD_TYPE=Release', '-DATTN_SIMD=ON', '-DATTN_BUILD_BENCH=ON']);
  }
  run('cmake', ['--build', DIR, '-j2', '--target', target]);
  built.add(target);
}

// Both micro-kernels come from kernel_bench's build (it depends on the relaxed module).
const build = () => buildBenchTarget('kernel_bench');

/** Builds (incrementally) and runs the micro-kernel row: { kernel, d, gflops }. */
export async function microkernelThroughput() {
  build();
  const lines = [];
  const path = resolve(`${DIR}/kernel_bench.cjs`);
  delete require.cache[path];
  await new Promise((done, fail) => {
    // Read by cpp/bench/kernel_bench_pre.js while the module loads; main() runs once the wasm is
    // instantiated, then postRun.
    globalThis.attnKernelBench = {
      arguments: ['microkernel'],
      print: (line) => lines.push(line),
      printErr: (line) => process.stderr.write(`${line}\n`),
      postRun: [done],
      onAbort: (what) => fail(new Error(`kernel_bench aborted: ${what}`)),
    };
    try {
      require(path);
    } catch (error) {
      fail(error);
    }
  }).finally(() => { delete globalThis.attnKernelBench; });
  const row = lines.map((line) => JSON.parse(line)).find((r) => r.row === 'microkernel');
  if (!row) throw new Error(`kernel_bench printed no micro-kernel row: ${lines.join(' | ')}`);
  return row;
}

/**
 * The same micro-kernel loop compiled with relaxed SIMD (built with kernel_bench), timed here:
 * { kernel, d, gflops }. Needs relaxed SIMD (Node 20: --experimental-wasm-relaxed-simd).
 */
export async function relaxedMicrokernelThroughput(d = 64) {
  build();
  const memory = new WebAssembly.Memory({ initial: 1 });
  const bytes = readFileSync(`${DIR}/relaxed_microkernel.wasm`);
  const { instance } = await WebAssembly.instantiate(bytes, { env: { memory } });
  const { microkernel_loop: loop, __stack_pointer: stackPointer } = instance.exports;
  // a (2 x d) then b (d x 16) at the bottom of its own memory, the stack growing down from the top.
  const a = 0, b = 2 * d * 4;
  new Float32Array(memory.buffer, a, 2 * d).fill(0.5);
  new Float32Array(memory.buffer, b, 16 * d).fill(0.25);
  stackPointer.value = memory.buffer.byteLength;
  const calls = 4096; // as kernel_bench's micro-kernel row
  const [{ best }] = await measureInTurns([{ fn: () => loop(a, b, d, calls) }], { samples: 9 });
  return { kernel: 'f32_gemm_tile<2> (2x16), relaxed SIMD', d, gflops: (2 * 2 * 16 * d * calls) / (best * 1e6) };
}
