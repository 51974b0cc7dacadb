// The browser side of engines.js (beside it), served from the repository's root: the 2x16
// micro-kernel loop (cpp/bench/microkernel_module.cpp, built with SIMD128 by emcc and with relaxed
// SIMD by clang-16) and the fused attention through the package (dist/), one thread, relaxed SIMD
// on and off. The driver asks for a runner once (prepare: built, checked, warmed up, its calls per
// sample fixed), then for its samples in turns with the other browsers'.
import { plainJsAttention } from '/web/shared/plain-js-attention.js';
import { PAD, batchOf } from '/web/shared/random-batch.js';
import { uniforms } from '/web/shared/random.js';
import { attentionFlops } from '/web/shared/timing.js';

const BUILD_DIR = '/build/bench-wasm-simd';
// As kernel_bench's micro-kernel row: a (2 x d) and b (d x 16) in L1, the loop called 4096 times.
const CALLS = 4096;

// The micro-kernel module of `build` with a (2 x d) = 0.5 and b (d x 16) = 0.25 in its memory:
// the loop then returns exactly calls * 8 accumulators * 4 lanes * d * 0.125.
async function microkernel({ build, d, entry = 'microkernel_loop' }) {
  const file = build === 'relaxed' ? 'relaxed_microkernel' : 'microkernel_simd128';
  const bytes = await (await fetch(`${BUILD_DIR}/${file}.wasm`)).arrayBuffer();
  let memory, base;
  if (build === 'relaxed') {  // imports its memory and has no stack of its own (cmake/relaxed.cmake)
    memory = new WebAssembly.Memory({ initial: 1 });
    base = 0;
  }
  const { instance } = await WebAssembly.instantiate(bytes, memory ? { env: { memory } } : {});
  if (memory) {
    instance.exports.__stack_pointer.value = memory.buffer.byteLength;
  } else {  // emcc's module has its own memory, with its stack: the operands go in a page added to it
    memory = instance.exports.memory;
    base = memory.grow(1) * 65536;
  }
  const a = base, b = base + 2 * d * 4;
  new Float32Array(memory.buffer, a, 2 * d).fill(0.5);
  new Float32Array(memory.buffer, b, 16 * d).fill(0.25);
  const loop = instance.exports[entry];
  return {
    run: () => loop(a, b, d, CALLS),
    flops: 2 * 2 * 16 * d * CALLS,
    check: (result) => result === CALLS * 8 * 4 * d * 0.125 || `the loop returned ${result}`,
  };
}

// One step of the fused forward (cpp/bench/attention_block_module.cpp: 64 queries against 128
// keys, d = 64) or some of its parts (1: scores, 2: softmax step, 4: pooling), in a module with
// no imports. Flops are the products' (2·64·128·64 each); the softmax step alone has none.
async function block({ parts, module = `${BUILD_DIR}/attention_block_simd128.wasm` }) {
  const bytes = await (await fetch(module)).arrayBuffer();
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const { memory, block_init: init, block_step: step } = instance.exports;
  const out = new Float32Array(memory.buffer, init(), 64 * 64);
  step(7, 1); // every part then has the operands a real step gives it
  const products = ((parts & 1) ? 1 : 0) + ((parts & 4) ? 1 : 0);
  return {
    run: () => step(parts, 1),
    flops: products * 2 * 64 * 128 * 64,
    check: () => out.every((x) => Number.isFinite(x)) && out.some((x) => x !== 0) || 'the output is not finite',
  };
}

// Q, K, V [1, n, d] and the plain-JS output, shared by both loads at one n.
const tasks = new Map();
function attentionTask(n, d) {
  const key = `${n}x${d}`;
  if (!tasks.has(key)) {
    const [q, k, v] = [1, 2, 3].map((seed) => uniforms(n * d, seed + n));
    tasks.set(key, { n, d, q, k, v, expected: plainJsAttention(q, k, v, n, n, d) });
  }
  return tasks.get(key);
}

const loads = new Map();
// One load of the package per setting, single-threaded as the page's SIMD rows are; `dist` is
// the package's folder (another build of it, to compare two builds in one run).
function load(relaxed, dist) {
  const key = `${dist} ${relaxed}`;
  if (!loads.has(key)) {
    loads.set(key, import(`${dist}/index.js`).then(({ loadAttention }) => loadAttention({ threads: 1, relaxedSimd: relaxed })));
  }
  return loads.get(key);
}

async function sdpa({ relaxed, n, d, dist = '/dist' }) {
  const attn = await load(relaxed, dist);
  const t = attentionTask(n, d);
  const shape = [1, n, d];
  const [q, k, v] = [t.q, t.k, t.v].map((data) => ({ data, shape }));
  return {
    run: () => attn.scaledDotProductAttention(q, k, v).output.data,
    flops: attentionFlops(n, n, d),
    check(out) {
      let max = 0;
      for (let i = 0; i < out.length; i++) max = Math.max(max, Math.abs(out[i] - t.expected[i]));
      return (attn.relaxedSimd === relaxed && max < 1e-4) ||
        `relaxedSimd ${attn.relaxedSimd} (asked ${relaxed}), max abs diff from plain JS ${max}`;
    },
  };
}

// One training step (forward, backward, clipping, Adam) of one of the package's models
// (`model`: Seq2SeqAttention or Transformer) at `config`, on a random batch, dropout 0: what the
// page's training sections do between two draws. Flops are not counted (0).
async function train({ relaxed, model: kind, config, batch, steps, dist = '/dist' }) {
  const attn = await load(relaxed, dist);
  const model = new attn[kind]({ ...config, dropout: 0, seed: 1 });
  const { src, lens, tgtIn, tgtOut } = batchOf(batch, steps, config.srcVocabSize, 7);
  const step = { pad: PAD, lr: 0.001, clip: 1 };
  return {
    run: () => model.trainStep(src, lens, tgtIn, tgtOut, step),
    flops: 0,
    check: (loss) => (Number.isFinite(loss) && loss > 0) || `the step's loss is ${loss}`,
  };
}

const RUNNERS = { microkernel, block, sdpa, train };
const prepared = new Map();

// Calls per sample: doubled until they take sampleMs.
function callsFor(run, sampleMs) {
  for (let reps = 1; ; reps *= 2) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) run();
    if (performance.now() - start >= sampleMs) return reps;
  }
}

window.engineBench = {
  engine: navigator.userAgent,
  async prepare(id, spec, sampleMs) {
    const runner = await RUNNERS[spec.kind](spec);
    const verdict = runner.check(runner.run());
    if (verdict !== true) throw new Error(`${id}: ${verdict}`);
    const reps = callsFor(runner.run, sampleMs);
    prepared.set(id, { ...runner, reps });
    return { flops: runner.flops, reps };
  },
  // One sample: ms per call of `reps` calls.
  sample(id) {
    const { run, reps } = prepared.get(id);
    const start = performance.now();
    for (let i = 0; i < reps; i++) run();
    return (performance.now() - start) / reps;
  },
};
document.title += ': ready';
