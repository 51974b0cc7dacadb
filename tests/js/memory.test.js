// The wasm heap: results are fresh JS-owned arrays (not views that a heap growth invalidates),
// and 20,000 calls, successful and failing, each moving 0.25-1 MiB through the heap, leave it
// flat.
// The heap is measured through the WebAssembly.Memory captured at instantiation
// (harness/wasm-memory.js): wasm memory only grows, so a leak of even 16 KiB per call would show
// as hundreds of MB of growth (or an out-of-memory error at 4 GiB).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, memoryOf, labelOf } from './backends.js';
import * as ref from '../../harness/reference.js';

const { assertClose, mulberry32, randomTensor, tensor } = ref;

const MiB = 2 ** 20;
// 20,000 calls against the default (SIMD) build; the scalar build runs the same wrapper and C++
// code, so a quarter of that keeps the suite short while still catching a leak there.
const CALLS = { 'wasm-simd': 20000, wasm: 5000 };

for (const attn of backends) {
  describe(`wasm heap (${labelOf(attn)})`, () => {
    const memory = memoryOf(attn);

    test('the module memory was captured', () => {
      assert.ok(memory instanceof WebAssembly.Memory);
    });

    test('results are not views of the wasm memory', () => {
      const rng = mulberry32(4000);
      const q = randomTensor(rng, [1, 2, 3]);
      const mha = new attn.MultiHeadAttention({ embedDim: 3, numHeads: 1 });
      const results = [
        attn.softmax(q),
        attn.maskedSoftmax(q, [1]),
        attn.score(q, q),
        attn.bmm(q, tensor([1, 2, 3], [1, 3, 1])),
        ...Object.values(attn.scaledDotProductAttention(q, q, q, { weights: true })),
        ...Object.values(attn.additiveAttention(q, q, q, { Wq: randomTensor(rng, [2, 3]), Wk: randomTensor(rng, [2, 3]), wv: randomTensor(rng, [2]), weights: true })),
        ...Object.values(attn.kernelRegression({ keys: tensor([1, 2], [2]), values: tensor([1, 2], [2]), queries: tensor([1], [1]), weights: true })),
        { data: attn.leaveOneOut({ keys: tensor([1, 2], [2]), values: tensor([1, 2], [2]), bandwidths: [1] }).errors },
        attn.positionalEncoding(2, 2),
        ...Object.values(mha.forward(q)),
      ];
      mha.dispose();
      for (const [i, result] of results.entries()) {
        assert.notEqual(result.data.buffer, memory.buffer, `result ${i} is a view of the wasm heap`);
        assert.equal(result.data.byteLength, result.data.buffer.byteLength, `result ${i} owns its whole buffer`);
      }
    });

    test('large results (64 KiB and more, copied into memory not zeroed first in Node) are arrays of their own', () => {
      const rng = mulberry32(4002);
      const x = randomTensor(rng, [64, 512]); // 128 KiB
      const first = attn.softmax(x);
      const second = attn.softmax(x);
      for (const result of [first, second]) {
        assert.notEqual(result.data.buffer, memory.buffer);
        assert.ok(result.data instanceof Float32Array);
        assert.equal(result.data.byteLength, result.data.buffer.byteLength);
      }
      assert.notEqual(first.data.buffer, second.data.buffer);
      assertClose(first, ref.softmax(x));
      assert.deepEqual(second.data, first.data);
      second.data.fill(0);
      assertClose(first, ref.softmax(x));
      // Transferable, as a result posted to a worker would be: the copy arrives whole, the
      // original is detached.
      const moved = structuredClone(first.data, { transfer: [first.data.buffer] });
      assert.equal(first.data.length, 0);
      assertClose({ data: moved, shape: [64, 512] }, ref.softmax(x));
    });

    test('results stay intact when the heap grows', () => {
      const rng = mulberry32(4001);
      const x = randomTensor(rng, [4, 9]);
      const kept = attn.softmax(x);
      const copy = Float32Array.from(kept.data);
      // One key with a value row larger than the whole current heap: in and out need 2x it.
      const before = memory.buffer.byteLength;
      const width = before / 4 + 1024;
      const v = new Float32Array(width);
      for (let i = 0; i < width; i += 4099) v[i] = i;
      const big = attn.scaledDotProductAttention(tensor([1], [1, 1, 1]), tensor([1], [1, 1, 1]), { data: v, shape: [1, 1, width] });
      assert.ok(memory.buffer.byteLength > before, 'the heap grew');
      assert.deepEqual(kept.data, copy);
      assertClose(kept, ref.softmax(x));
      for (let i = 0; i < width; i += 4099) assert.equal(big.output.data[i], i);
      assert.equal(big.output.data[width - 1], 0);
    });

    const count = CALLS[attn.backend];
    test(`${count} calls moving 0.25-1 MiB each (successes and failures) leave the heap flat`, () => {
      const n = 262144; // 1 MiB of float32
      const wide = new Float32Array(n).fill(0.5);
      const quarter = wide.subarray(0, n / 4);
      const one = tensor([1], [1, 1, 1]);
      const emptyQuery = tensor([], [1, 1, 0]);
      const manyKeys = tensor([], [1, n / 4, 0]);
      const square = tensor([], [1, 512, 0]);
      const values511 = tensor(new Float32Array(511), [1, 511, 1]);
      const lens = new Int32Array(4096).fill(3);
      const queries4096 = tensor([], [1, 4096, 0]);
      const keys4 = tensor([], [1, 4, 0]);
      const values3 = tensor(new Float32Array(3), [1, 3, 1]);
      const mha = new attn.MultiHeadAttention({ embedDim: 1, numHeads: 1 });
      const keyN = { data: wide, shape: [1, n, 1] };
      const valueShort = { data: wide.subarray(1), shape: [1, n - 1, 1] };
      const bigMask = new Float32Array(n);
      let failures = 0;
      const kinds = [
        // success: 256 KiB value in, 256 KiB output out
        () => attn.scaledDotProductAttention(one, one, { data: quarter, shape: [1, 1, n / 4] }),
        // success: 256 KiB of scores out
        () => attn.score(emptyQuery, manyKeys),
        // failure in the core (v's rows) after a 1 MiB additive mask went into the heap
        () => attn.scaledDotProductAttention(square, square, values511, { mask: bigMask }),
        // failure in the core (value's rows) after 2 MiB of key and attnMask went in
        () => mha.forward(tensor([1], [1, 1, 1]), keyN, valueShort, { attnMask: bigMask }),
        // failure in the core (v's rows) after 16 KiB of per-query valid lengths went in
        () => attn.scaledDotProductAttention(queries4096, keys4, values3, { validLens: lens }),
        // success: a multi-head instance created, used and disposed
        () => {
          const m = new attn.MultiHeadAttention({ embedDim: 16, numHeads: 4 }).resetParameters(3);
          m.forward(tensor(new Float32Array(2 * 4 * 16).fill(0.1), [2, 4, 16]));
          m.dispose();
        },
        // failure before anything is allocated: the weights of embedDim 2^20 exceed the heap
        () => new attn.MultiHeadAttention({ embedDim: 2 ** 20, numHeads: 1 }),
      ];
      const run = (times) => {
        for (let i = 0; i < times; i++) {
          try {
            kinds[i % kinds.length]();
          } catch (error) {
            if (!(error instanceof RangeError)) throw error;
            failures++;
          }
        }
      };
      run(kinds.length * 20); // warm-up: the heap reaches its steady size
      const before = memory.buffer.byteLength;
      failures = 0;
      run(count);
      const after = memory.buffer.byteLength;
      mha.dispose();
      assert.ok(failures >= Math.floor(count / kinds.length) * 4, `${failures} failing calls`);
      assert.ok(after - before <= 8 * MiB, `the wasm heap grew by ${(after - before) / MiB} MiB over ${count} calls (from ${before / MiB} MiB)`);
      assert.ok(process.memoryUsage().arrayBuffers < 512 * MiB, 'JS-side array buffers stay bounded');
      // And the module still computes.
      const rng = mulberry32(4002);
      const q = randomTensor(rng, [2, 3, 4]);
      assertClose(attn.scaledDotProductAttention(q, q, q).output, ref.scaledDotProductAttention(q, q, q).output);
    });
  });
}
