// The package under hostile or unusual input, by class (issue 13): arguments that answer
// differently when read twice, inputs that used to give unclear errors, state that must stay
// whole when a call fails, zero-size and huge sizes, and fills float32 cannot hold. Every
// result is checked against the double-precision reference; every rejection must be a
// TypeError or RangeError naming the argument.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import vm from 'node:vm';

import { readSafetensors } from 'attention-wasm';
import { backends, memoryOf, labelOf } from './backends.js';
import { detach } from './hostile.js';
import * as ref from '../../harness/reference.js';
import { buildSafetensors, entry } from './safetensors-writer.js';

const { assertClose, mulberry32, randomTensor, tensor } = ref;
const MiB = 2 ** 20;

/** Asserts fn throws ErrorType with a message matching every pattern. */
function assertThrowsNamed(fn, ErrorType, patterns) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof ErrorType, `expected a ${ErrorType.name}, got ${error?.name}: ${error?.message}`);
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  });
}

/** An object whose properties are getters counting their reads into `reads`. */
function counted(values, reads = {}) {
  const object = {};
  for (const [key, value] of Object.entries(values)) {
    reads[key] = 0;
    Object.defineProperty(object, key, { enumerable: true, get: () => { reads[key]++; return value; } });
  }
  return object;
}

for (const attn of backends) {
  const rng = mulberry32(13000);
  const q = randomTensor(rng, [2, 3, 4]);
  const k = randomTensor(rng, [2, 5, 4]);
  const v = randomTensor(rng, [2, 5, 6]);
  const x = randomTensor(rng, [2, 3, 5]);

  describe(`arguments read twice (${labelOf(attn)})`, () => {
    test('a data getter that returns another array on its second read is read once', () => {
      const first = randomTensor(rng, [2, 3]);
      let reads = 0;
      const hostile = { shape: [2, 3], get data() { return reads++ === 0 ? first.data : new Float32Array(1); } };
      assertClose(attn.softmax(hostile), ref.softmax(first));
      assert.equal(reads, 1);
    });

    test('a shape whose element getter grows after the first read is copied once', () => {
      const shape = [2, 5];
      let reads = 0;
      Object.defineProperty(shape, 2, { enumerable: true, get: () => (reads++ === 0 ? 4 : 4096) });
      const got = attn.scaledDotProductAttention(q, { data: k.data, shape }, v);
      assertClose(got.output, ref.scaledDotProductAttention(q, k, v).output);
      assert.equal(reads, 1);
    });

    test('a Proxy shape whose get trap changes after validation is read once per element', () => {
      const traps = [];
      const shape = new Proxy([2, 3, 5], {
        get(target, key, receiver) {
          if (/^\d+$/.test(String(key))) traps.push(key);
          return traps.length > 3 ? 2 ** 20 : Reflect.get(target, key, receiver);
        },
      });
      assertClose(attn.maskedSoftmax({ data: x.data, shape }, [2, 4]), ref.maskedSoftmax(x, [2, 4]));
      assert.deepEqual(traps, ['0', '1', '2']);
    });

    test('a shape with its own reduce and forEach lying about its size is rejected by its real size', () => {
      const shape = [1, 1, 2 ** 20];
      shape.reduce = () => 4;
      shape.forEach = () => {};
      shape.every = () => true;
      assertThrowsNamed(() => attn.softmax({ data: new Float32Array(4), shape }), RangeError,
        [/^x: shape \[1, 1, 1048576\] holds 1048576 values, but data has 4/]);
    });

    test('a shape with a hole is rejected, naming the axis', () => {
      // eslint-disable-next-line no-sparse-arrays
      assertThrowsNamed(() => attn.softmax({ data: new Float32Array(4), shape: [1, , 4] }), TypeError,
        [/^x\.shape\[1\]: expected a non-negative integer, got undefined/]);
    });

    test('an object that only inherits from Float32Array.prototype is not a Float32Array', () => {
      const fake = Object.create(Float32Array.prototype);
      assertThrowsNamed(() => attn.softmax({ data: fake, shape: [0] }), TypeError,
        [/^x\.data: expected Float32Array, got an object posing as a Float32Array/]);
      const proxy = new Proxy(new Float32Array(4), {});
      assertThrowsNamed(() => attn.softmax({ data: proxy, shape: [4] }), TypeError, [/^x\.data: expected Float32Array, got an object posing/]);
    });

    test('every option and state-dict property is read once', () => {
      const Wq = randomTensor(rng, [7, 4]);
      const Wk = randomTensor(rng, [7, 4]);
      const wv = randomTensor(rng, [7]);
      const reads = {};
      const options = counted({ Wq, Wk, wv, validLens: [2, 4], causal: true, fill: -1e5, weights: true, dropout: 0, seed: 1, scale: undefined, mask: undefined }, reads);
      const got = attn.additiveAttention(q, k, v, options);
      const want = ref.additiveAttention(q, k, v, { Wq, Wk, wv, validLens: [2, 4], causal: true, fill: -1e5 });
      assertClose(got.output, want.output);
      for (const [key, count] of Object.entries(reads)) assert.ok(count <= 1, `option ${key} was read ${count} times`);
      const tensorReads = {};
      const wqCounted = counted({ data: Wq.data, shape: Wq.shape }, tensorReads);
      attn.score(q, k, { fn: 'additive', Wq: wqCounted, Wk, wv });
      assert.deepEqual(tensorReads, { data: 1, shape: 1 });
    });

    test("a getter that detaches an earlier argument's buffer is caught before the core reads it", () => {
      const buffer = new ArrayBuffer(q.data.byteLength);
      const q2 = { data: new Float32Array(buffer), shape: q.shape };
      q2.data.set(q.data);
      const k2 = { shape: k.shape, get data() { detach(buffer); return k.data; } };
      assertThrowsNamed(() => attn.scaledDotProductAttention(q2, k2, v), TypeError, [/^q: its buffer was detached/]);
    });
  });

  describe(`unclear errors (${labelOf(attn)})`, () => {
    test('a Float32Array subclass is a Float32Array', () => {
      class Tagged extends Float32Array {
        get length() { return 1e9; } // an own accessor must not change what is read
      }
      const data = new Tagged(x.data);
      assertClose(attn.softmax({ data, shape: x.shape }), ref.softmax(x));
    });

    test('a Node Buffer is a Uint8Array mask', () => {
      const bits = ref.randomBits(rng, 15);
      const mask = Buffer.from(bits);
      const got = attn.scaledDotProductAttention(q, k, v, { mask, weights: true });
      const want = ref.scaledDotProductAttention(q, k, v, { mask: bits });
      assertClose(got.output, want.output);
      assertClose(got.weights, want.weights);
    });

    test('typed arrays from another realm are accepted', () => {
      const realm = vm.createContext({});
      const data = vm.runInContext(`new Float32Array(${x.data.length})`, realm);
      data.set(x.data);
      const lens = vm.runInContext('Int32Array.from([1, 5])', realm);
      assertClose(attn.maskedSoftmax({ data, shape: x.shape }, lens), ref.maskedSoftmax(x, [1, 5]));
    });

    test('string valid lengths are a TypeError that shows the string', () => {
      assertThrowsNamed(() => attn.maskedSoftmax(x, ['1', 2]), TypeError, [/^validLens: expected lengths in \[0, 5\], got '1' at index 0$/]);
    });

    test('a BigInt size says it got a BigInt', () => {
      assertThrowsNamed(() => attn.softmax({ data: new Float32Array(2), shape: [2n] }), TypeError, [/^x\.shape\[0\]:/, /got a BigInt \(2n\)/]);
      assertThrowsNamed(() => attn.positionalEncoding(4n, 2), TypeError, [/^n:/, /BigInt/]);
    });

    test('a detached buffer is a TypeError naming the argument', () => {
      const data = new Float32Array(6);
      detach(data.buffer);
      assertThrowsNamed(() => attn.softmax({ data, shape: [6] }), TypeError, [/^x\.data: the Float32Array's buffer is detached/]);
      const mask = new Uint8Array(15);
      detach(mask.buffer);
      assertThrowsNamed(() => attn.scaledDotProductAttention(q, k, v, { mask }), TypeError, [/^mask: the Uint8Array's buffer is detached/]);
    });

    test('a plain array where a mask belongs names the mask, not mask.data', () => {
      assertThrowsNamed(() => attn.scaledDotProductAttention(q, k, v, { keyPaddingMask: new Array(10).fill(0) }), TypeError,
        [/^keyPaddingMask: expected a Uint8Array or a tensor/]);
    });
  });

  describe(`state (${labelOf(attn)})`, () => {
    const config = { embedDim: 8, numHeads: 2 };
    const input = randomTensor(rng, [2, 3, 8]);

    test('a load that fails on its last entry leaves every weight as it was', () => {
      const mha = new attn.MultiHeadAttention(config).loadStateDict(ref.randomStateDict(mulberry32(1), config));
      const before = mha.forward(input).output;
      const dict = ref.randomStateDict(mulberry32(2), config);
      const first = dict.in_proj_weight;
      const last = dict['out_proj.bias'];
      // The last entry's getter detaches the first entry's memory after it was checked.
      Object.defineProperty(dict, 'out_proj.bias', { enumerable: true, get: () => { detach(first.data.buffer); return last; } });
      assertThrowsNamed(() => mha.loadStateDict(dict), TypeError, [/in_proj_weight/, /detached/]);
      assert.deepEqual(mha.forward(input).output, before);
      mha.dispose();
    });

    test('a Float32Array subclass as the last entry loads like a Float32Array', () => {
      class Weights extends Float32Array {}
      const dict = ref.randomStateDict(mulberry32(3), config);
      const plain = new attn.MultiHeadAttention(config).loadStateDict(dict);
      const subclassed = new attn.MultiHeadAttention(config).loadStateDict({
        ...dict, 'out_proj.bias': { data: new Weights(dict['out_proj.bias'].data), shape: [8] },
      });
      assert.deepEqual(subclassed.forward(input).output, plain.forward(input).output);
      assertClose(plain.forward(input).output, ref.multiHeadAttention(dict, config, input).output);
      plain.dispose();
      subclassed.dispose();
    });

    test('dispose() from a getter during forward or loadStateDict is a clear TypeError and leaks nothing', () => {
      const memory = memoryOf(attn);
      const run = () => {
        const mha = new attn.MultiHeadAttention(config);
        assertThrowsNamed(() => mha.forward(input, input, input, { get needWeights() { mha.dispose(); return true; } }),
          TypeError, [/^MultiHeadAttention: used after dispose\(\)$/]);
        const other = new attn.MultiHeadAttention(config);
        const dict = ref.randomStateDict(mulberry32(4), config);
        const bias = dict['out_proj.bias'];
        Object.defineProperty(dict, 'out_proj.bias', { enumerable: true, get: () => { other.dispose(); return bias; } });
        assertThrowsNamed(() => other.loadStateDict(dict), TypeError, [/^MultiHeadAttention: used after dispose\(\)$/]);
      };
      for (let i = 0; i < 50; i++) run();
      const before = memory.buffer.byteLength;
      for (let i = 0; i < 500; i++) run();
      assert.equal(memory.buffer.byteLength, before);
    });
  });

  describe(`zero-size and huge (${labelOf(attn)})`, () => {
    test("score 'general' with dq = 0 is all zeros", () => {
      const k3 = randomTensor(rng, [2, 5, 3]);
      const got = attn.score(tensor([], [2, 3, 0]), k3, { fn: 'general', W: tensor([], [0, 3]) });
      assertClose(got, ref.score(tensor([], [2, 3, 0]), k3, { fn: 'general', W: tensor([], [0, 3]) }));
    });

    test('additive scoring and attention with hidden size 0: zero scores, uniform weights', () => {
      const params = { Wq: tensor([], [0, 4]), Wk: tensor([], [0, 4]), wv: tensor([], [0]) };
      assertClose(attn.score(q, k, { fn: 'additive', ...params }), ref.score(q, k, { fn: 'additive', ...params }));
      const got = attn.additiveAttention(q, k, v, { ...params, validLens: [3, 5], weights: true });
      const want = ref.additiveAttention(q, k, v, { ...params, validLens: [3, 5] });
      assertClose(got.output, want.output);
      assertClose(got.weights, want.weights);
    });

    test('batch 0 with a huge nq x nk allocates nothing, with dropout or in multi-head attention', () => {
      const memory = memoryOf(attn);
      const before = memory.buffer.byteLength;
      const n = 2 ** 20;
      const empty = (rows, cols) => tensor([], [0, rows, cols]);
      const got = attn.scaledDotProductAttention(empty(n, 8), empty(n, 8), empty(n, 8), { dropout: 0.5, weights: true });
      assert.deepEqual(got.weights.shape, [0, n, n]);
      const mha = new attn.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
      assert.deepEqual(mha.forward(empty(n, 4), empty(n, 4)).weights.shape, [0, n, n]);
      mha.dispose();
      assert.ok(memory.buffer.byteLength - before < 64 * MiB, `the heap grew by ${(memory.buffer.byteLength - before) / MiB} MiB`);
    });

    test('a result just under 4 GiB fails before allocating, naming the real limit', () => {
      const memory = memoryOf(attn);
      const before = memory.buffer.byteLength;
      const n = 2 ** 15;
      assertThrowsNamed(() => attn.score(tensor([], [1, n, 0]), tensor([], [1, n - 4, 0])), RangeError,
        [/^scores: shape \[1, 32768, 32764\] needs 4\.0 GiB/, /limit of 4032 MiB/]);
      assert.equal(memory.buffer.byteLength, before, 'nothing was allocated');
    });

    test('kernelRegression without weights asks for no [m, n] buffer', () => {
      const memory = memoryOf(attn);
      const m = 2 ** 13;
      const before = memory.buffer.byteLength;
      const got = attn.kernelRegression({ keys: tensor(new Float32Array(m), [m]), values: tensor(new Float32Array(m).fill(2), [m]), queries: tensor(new Float32Array(m), [m]) });
      assert.ok(got.output.data.every((y) => y === 2));
      assert.ok(memory.buffer.byteLength - before < m * m * 4, `the heap grew by ${(memory.buffer.byteLength - before) / MiB} MiB`);
    });
  });

  describe(`fill (${labelOf(attn)})`, () => {
    const allMasked = [0, 0];

    test('a fill float32 cannot hold is a RangeError naming fill; -Infinity and -3.4e38 still work', () => {
      for (const fill of [-1e39, 1e39, Infinity, NaN]) {
        assertThrowsNamed(() => attn.maskedSoftmax(x, allMasked, { fill }), RangeError, [/^fill: expected a number float32 can hold/]);
        assertThrowsNamed(() => attn.scaledDotProductAttention(q, k, v, { validLens: allMasked, fill }), RangeError, [/^fill:/]);
      }
      assert.ok(attn.maskedSoftmax(x, allMasked, { fill: -Infinity }).data.every(Number.isNaN), 'PyTorch: a fully masked row is NaN');
      const largest = -3.4028234663852886e38;
      assertClose(attn.maskedSoftmax(x, allMasked, { fill: largest }), ref.maskedSoftmax(x, allMasked, { fill: largest }));
    });

    test('multi-head attention rejects the same fills', () => {
      const mha = new attn.MultiHeadAttention({ embedDim: 4, numHeads: 1 });
      try {
        assertThrowsNamed(() => mha.forward(q, q, q, { validLens: allMasked, fill: -1e39 }), RangeError, [/^fill:/, /-Infinity/]);
      } finally {
        mha.dispose();
      }
    });
  });

  describe(`memory (${labelOf(attn)})`, () => {
    // The check: 50,000 calls on the SIMD build (the scalar build runs the same wrapper
    // and C++ code; 10,000 there keep the suite short), half of them failing, the backward passes
    // and multi-head create / forward / backward / dispose among them.
    const calls = attn.backend === 'wasm-simd' ? 50000 : 10000;
    test(`memory after ${calls} mixed calls, including failing ones, stays flat`, () => {
      const memory = memoryOf(attn);
      const mha = new attn.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
      const gradOutput = randomTensor(rng, [2, 3, 6]);
      const additive = { Wq: randomTensor(rng, [3, 4]), Wk: randomTensor(rng, [3, 4]), wv: randomTensor(rng, [3]) };
      const detachedData = () => {
        const data = new Float32Array(8);
        detach(data.buffer);
        return data;
      };
      const kinds = [
        () => attn.scaledDotProductAttention(q, k, v, { validLens: [2, 4], weights: true }),
        () => attn.maskedSoftmax(x, [1, 2], { fill: -1e39 }),
        () => attn.softmax({ data: detachedData(), shape: [8] }),
        () => attn.score(tensor([], [1, 2 ** 15, 0]), tensor([], [1, 2 ** 15, 0])),
        () => attn.additiveAttention(q, k, v, { Wq: tensor([], [0, 4]), Wk: tensor([], [0, 4]), wv: tensor([], [0]), mask: Buffer.alloc(15) }),
        () => attn.bmm(q, randomTensor(rng, [2, 5, 3])), // the core rejects b
        () => mha.forward(randomTensor(rng, [1, 2, 4]), undefined, undefined, { attnMask: new Uint8Array(3) }),
        () => {
          const m = new attn.MultiHeadAttention({ embedDim: 4, numHeads: 2 });
          m.forward(q, q, q, { get fill() { m.dispose(); return -1; } });
        },
        () => attn.scaledDotProductAttentionBackward(q, k, v, gradOutput, { validLens: [2, 4], dropout: 0.2, seed: 3 }),
        () => attn.scaledDotProductAttentionBackward(q, k, v, randomTensor(rng, [2, 3, 5])), // gradOutput's shape
        () => attn.additiveAttentionBackward(q, k, v, gradOutput, { ...additive, causal: true }),
        () => attn.additiveAttentionBackward(q, k, v, gradOutput, { ...additive, wv: randomTensor(rng, [4]) }), // the core rejects wv
        () => {
          const m = new attn.MultiHeadAttention({ embedDim: 4, numHeads: 2 }).resetParameters(7);
          try {
            m.forward(q, q, q, { attnMask: new Uint8Array(9) });
            m.backward(q, k, k, q, { keyPaddingMask: new Uint8Array(10) });
            m.loadStateDict(m.stateDict());
          } finally {
            m.dispose();
          }
        },
        () => mha.backward(q, k, k, q, { keyPaddingMask: new Uint8Array(9) }), // the mask's shape
      ];
      let failures = 0;
      const run = (times) => {
        for (let i = 0; i < times; i++) {
          try {
            kinds[i % kinds.length]();
          } catch (error) {
            assert.ok(error instanceof TypeError || error instanceof RangeError, `${error.name}: ${error.message}`);
            failures++;
          }
        }
      };
      run(kinds.length * 20);
      const before = memory.buffer.byteLength;
      failures = 0;
      const rounds = Math.floor(calls / kinds.length);
      run(rounds * kinds.length);
      mha.dispose();
      assert.equal(failures, rounds * 9, 'nine of every fourteen calls fail');
      assert.ok(memory.buffer.byteLength - before <= 2 * MiB, `the heap grew by ${(memory.buffer.byteLength - before) / MiB} MiB`);
      assertClose(attn.scaledDotProductAttention(q, k, v).output, ref.scaledDotProductAttention(q, k, v).output);
    });
  });
}

// readSafetensors uses no backend: its one argument, bytes, in the same hostile forms.
describe('readSafetensors: hostile bytes', () => {
  const file = buildSafetensors([entry('w', 'F32', [2], [1, 2])]);
  const read = (bytes) => Array.from(readSafetensors(bytes).w.data);

  test('a detached ArrayBuffer, or a Uint8Array over one, is a TypeError naming bytes', () => {
    const buffer = file.buffer.slice(0);
    const array = new Uint8Array(buffer);
    detach(buffer);
    assertThrowsNamed(() => readSafetensors(buffer), TypeError, [/^bytes: the ArrayBuffer is detached/]);
    assertThrowsNamed(() => readSafetensors(array), TypeError, [/^bytes: the Uint8Array's buffer is detached/]);
  });

  test('a Uint8Array and an ArrayBuffer from another realm are read', () => {
    const array = vm.runInContext(`new Uint8Array(${file.length})`, vm.createContext({}));
    array.set(file);
    assert.deepEqual(read(array), [1, 2]);
    assert.deepEqual(read(array.buffer), [1, 2]);
  });

  test('a Uint8Array subclass is read from its memory, not through its accessors', () => {
    class Lying extends Uint8Array {
      get length() { return 1e9; }
      get byteOffset() { return 3; }
    }
    assert.deepEqual(read(new Lying(file)), [1, 2]);
  });

  test('what only poses as an ArrayBuffer or Uint8Array is a TypeError naming bytes', () => {
    const posers = [new Proxy(file.buffer, {}), Object.create(ArrayBuffer.prototype), new Proxy(file, {}),
      new SharedArrayBuffer(file.length), new DataView(file.buffer)];
    for (const value of posers) {
      assertThrowsNamed(() => readSafetensors(value), TypeError, [/^bytes: expected a Uint8Array or ArrayBuffer, got /]);
    }
  });
});
