// Rotary position embeddings (attn.applyRotary, attn.applyRotaryBackward) on the three builds:
// the PyTorch fixture (Hugging Face Llama's rotate_half and GPT-J's interleaved form,
// tests/fixtures/modern/rotary.json), [B, n, d] and [B, H, n, d] against a double-precision
// reference written here from the formulas (every way to give positions, partial dim, positions
// near 2^20), the backward as the transpose and inverse of the forward, and every rejected
// argument, after which the module still computes correct results.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { loadFixture } from './fixtures.js';
import * as ref from '../../harness/reference.js';

const { assertClose, mulberry32, randomTensor, tensor } = ref;

/**
 * The rotation in double, straight from the formulas (sign -1: the opposite angles). positions
 * as the API takes them: undefined, number[] / Int32Array [n], or { data, shape: [n] | [B, n] }.
 */
function rotaryReference(x, options = {}, sign = 1) {
  const { positions, offset = 0, base = 10000, interleaved = false } = options;
  const { shape } = x;
  const [n, d] = shape.slice(-2);
  const heads = shape.length === 4 ? shape[1] : 1;
  const dim = options.dim ?? d;
  const half = dim / 2;
  const table = positions === undefined || positions.shape === undefined ? { data: positions, shape: [n] } : positions;
  const out = Float64Array.from(x.data);
  const matrices = n * d === 0 ? 0 : x.data.length / (n * d);
  for (let m = 0; m < matrices; m++) {
    for (let i = 0; i < n; i++) {
      let p = offset + i;
      if (positions !== undefined) p = table.shape.length === 2 ? table.data[Math.floor(m / heads) * n + i] : table.data[i];
      const row = (m * n + i) * d;
      for (let k = 0; k < half; k++) {
        const angle = sign * p * base ** (-2 * k / dim);
        const first = row + (interleaved ? 2 * k : k);
        const second = row + (interleaved ? 2 * k + 1 : k + half);
        const a = x.data[first];
        const b = x.data[second];
        out[first] = a * Math.cos(angle) - b * Math.sin(angle);
        out[second] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    }
  }
  return { data: out, shape: [...shape] };
}

// The fixture's options as the API takes them: positions [n] as a number[], [B, n] as a tensor.
function fixtureOptions(options) {
  const out = { ...options };
  if (options.positions) {
    const { data, shape } = options.positions;
    out.positions = shape.length === 1 ? [...data] : { data: Int32Array.from(data), shape: [...shape] };
  }
  return out;
}

const peak = (t) => t.data.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

// [description, options for x of shape [B = 2, (H = 3,) n = 5, d = 10]]
const OPTION_CASES = [
  ['defaults', {}],
  ['interleaved', { interleaved: true }],
  ['offset 7', { offset: 7 }],
  ['dim 4 of 10, base 500', { dim: 4, base: 500 }],
  ['interleaved, dim 6, positions number[] [n]', { dim: 6, interleaved: true, positions: [4, 0, 17, 17, 2] }],
  ['positions Int32Array [n]', { positions: Int32Array.of(1, 2, 3, 50, 8) }],
  ['positions tensor [n]', { positions: tensor([9, 8, 7, 6, 5], [5], Int32Array) }],
  ['positions tensor [B, n]', { positions: tensor([0, 1, 2, 3, 4, 30, 9, 9, 0, 511], [2, 5], Int32Array), interleaved: true }],
];

const LARGE = tensor([0, 99999, 100000, 100001, 2 ** 20, 2 ** 20 - 1, 65536, 123457, 2 ** 30, 7], [2, 5], Int32Array);

// [description, (attn) => call, error type, patterns the message must match]; x is [2, 3, 8].
const x8 = randomTensor(mulberry32(90), [2, 3, 8]);
const ERROR_CASES = [
  ['x null', (a) => a.applyRotary(null), TypeError, [/^x: expected a tensor/]],
  ['x a bare Float32Array', (a) => a.applyRotary(new Float32Array(8)), TypeError, [/^x: expected a tensor/]],
  ['x of rank 2', (a) => a.applyRotary(tensor(new Float32Array(12), [3, 4])), RangeError, [/^x: expected shape \[B, n, d\] or \[B, H, n, d\], got \[3, 4\]/]],
  ['x of rank 5', (a) => a.applyRotary(tensor(new Float32Array(32), [1, 2, 2, 2, 4])), RangeError, [/^x: expected shape/, /\[1, 2, 2, 2, 4\]/]],
  ['x data length != shape', (a) => a.applyRotary(tensor(new Float32Array(5), [1, 2, 4])), RangeError, [/^x: shape \[1, 2, 4\] holds 8 values, but data has 5/]],
  ['gradOutput of rank 2', (a) => a.applyRotaryBackward(tensor(new Float32Array(4), [2, 2])), RangeError, [/^gradOutput: expected shape \[B, n, d\] or \[B, H, n, d\]/]],
  ['options a number', (a) => a.applyRotary(x8, 5), TypeError, [/^options: expected an options object, got 5/]],
  ['dim odd', (a) => a.applyRotary(x8, { dim: 3 }), RangeError, [/^dim: expected an even number in \[2, 8\], got 3/]],
  ['dim > d', (a) => a.applyRotary(x8, { dim: 10 }), RangeError, [/^dim: expected an even number in \[2, 8\], got 10/]],
  ['dim 0', (a) => a.applyRotary(x8, { dim: 0 }), RangeError, [/^dim: expected an even number in \[2, 8\], got 0/]],
  ['dim fractional', (a) => a.applyRotary(x8, { dim: 2.5 }), RangeError, [/^dim:/, /2\.5/]],
  ['dim a string', (a) => a.applyRotary(x8, { dim: '4' }), TypeError, [/^dim: expected a non-negative integer, got '4'/]],
  ['d odd without dim', (a) => a.applyRotary(tensor(new Float32Array(10), [1, 2, 5])), RangeError, [/^dim: expected an even number in \[2, 5\]/, /default, d = 5, is odd/]],
  ['d = 1', (a) => a.applyRotary(tensor(new Float32Array(2), [1, 2, 1]), { dim: 2 }), RangeError, [/^dim:/, /d = 1/]],
  ['positions number[] of the wrong length', (a) => a.applyRotary(x8, { positions: [0, 1] }), RangeError, [/^positions: expected 3 entries/, /got 2$/]],
  ['positions number[] of B * n entries', (a) => a.applyRotary(x8, { positions: [0, 1, 2, 3, 4, 5] }), RangeError, [/^positions: expected 3 entries/, /\[2, 3\]/]],
  ['positions Int32Array of the wrong length', (a) => a.applyRotary(x8, { positions: new Int32Array(4) }), RangeError, [/^positions: expected shape \[3\] or \[2, 3\], got \[4\]/]],
  ['positions tensor [B, n] with the wrong B', (a) => a.applyRotary(x8, { positions: tensor(new Int32Array(9), [3, 3], Int32Array) }), RangeError, [/^positions: expected shape \[3\] or \[2, 3\], got \[3, 3\]/]],
  ['positions tensor [1, B, n]', (a) => a.applyRotary(x8, { positions: tensor(new Int32Array(6), [1, 2, 3], Int32Array) }), RangeError, [/^positions: expected shape/]],
  ['positions negative in a number[]', (a) => a.applyRotary(x8, { positions: [0, -1, 2] }), RangeError, [/^positions: expected integers in \[0, 2147483647\], got -1 at index 1/]],
  ['positions negative in an Int32Array', (a) => a.applyRotary(x8, { positions: Int32Array.of(0, 1, -7) }), RangeError, [/^positions: expected integers/, /got -7 at index 2/]],
  ['positions negative in a [B, n] tensor', (a) => a.applyRotaryBackward(x8, { positions: tensor([0, 1, 2, 3, -4, 5], [2, 3], Int32Array) }), RangeError, [/^positions:/, /-4 at index 4/]],
  ['positions fractional', (a) => a.applyRotary(x8, { positions: [0, 1.5, 2] }), RangeError, [/^positions:/, /1\.5 at index 1/]],
  ['positions above int32', (a) => a.applyRotary(x8, { positions: [0, 2 ** 31, 2] }), RangeError, [/^positions:/, /2147483648 at index 1/]],
  ['positions a string entry', (a) => a.applyRotary(x8, { positions: [0, '1', 2] }), TypeError, [/^positions:/, /'1' at index 1/]],
  ['positions a Float32Array', (a) => a.applyRotary(x8, { positions: new Float32Array(3) }), TypeError, [/^positions: expected Int32Array, got Float32Array\(3\)/]],
  ['positions a string', (a) => a.applyRotary(x8, { positions: '012' }), TypeError, [/^positions: expected an Int32Array or number\[\] of 3 entries/]],
  ['positions null', (a) => a.applyRotary(x8, { positions: null }), TypeError, [/^positions:/, /got null/]],
  ['offset negative', (a) => a.applyRotary(x8, { offset: -1 }), RangeError, [/^offset: expected an integer in \[0, 2147483647\], got -1/]],
  ['offset fractional', (a) => a.applyRotary(x8, { offset: 0.5 }), RangeError, [/^offset:/, /0\.5/]],
  ['offset a string', (a) => a.applyRotary(x8, { offset: '1' }), TypeError, [/^offset: expected a non-negative integer/]],
  ['base 0', (a) => a.applyRotary(x8, { base: 0 }), RangeError, [/^base: expected a finite number > 0, got 0/]],
  ['base negative', (a) => a.applyRotary(x8, { base: -2 }), RangeError, [/^base: expected a finite number > 0, got -2/]],
  ['base NaN', (a) => a.applyRotary(x8, { base: NaN }), RangeError, [/^base: expected a finite number > 0, got NaN/]],
  ['base Infinity', (a) => a.applyRotary(x8, { base: Infinity }), RangeError, [/^base: expected a finite number > 0, got Infinity/]],
  ['base beyond float32', (a) => a.applyRotary(x8, { base: 1e39 }), RangeError, [/^base:/]],
  ['base a string', (a) => a.applyRotary(x8, { base: '10000' }), TypeError, [/^base: expected a number/]],
  ['interleaved a number', (a) => a.applyRotary(x8, { interleaved: 1 }), TypeError, [/^interleaved: expected a boolean, got 1/]],
  ['interleaved a string', (a) => a.applyRotaryBackward(x8, { interleaved: 'true' }), TypeError, [/^interleaved: expected a boolean/]],
];

for (const attn of backends) {
  describe(`rotary embeddings (${labelOf(attn)})`, () => {
    test('match the PyTorch fixture (Hugging Face Llama and GPT-J), forward and backward', () => {
      for (const { name, inputs, options, expected } of loadFixture('modern/rotary.json')) {
        const o = fixtureOptions(options);
        // The rotation's rule (scripts/fixtures/rotary.py): 2e-6 of the largest reference entry.
        const output = attn.applyRotary(ref.tensor(inputs.x.data, inputs.x.shape), o);
        assertClose(output, expected.output, { atol: 2e-6 * peak(expected.output), rtol: 0, label: `${name} output` });
        const dx = attn.applyRotaryBackward(ref.tensor(inputs.gradOutput.data, inputs.gradOutput.shape), o);
        assertClose(dx, expected.dx, { atol: 2e-6 * peak(expected.dx), rtol: 0, label: `${name} dx` });
      }
    });

    for (const shape of [[2, 5, 10], [2, 3, 5, 10]]) {
      for (const [description, options] of OPTION_CASES) {
        test(`[${shape}], ${description}: forward and backward match the reference`, () => {
          const x = randomTensor(mulberry32(shape.length * 100 + description.length), shape);
          const copy = Float32Array.from(x.data);
          const got = attn.applyRotary(x, options);
          assert.deepEqual(got.shape, shape);
          assert.ok(got.data instanceof Float32Array);
          assertClose(got, rotaryReference(x, options), { label: 'forward' });
          assertClose(attn.applyRotaryBackward(x, options), rotaryReference(x, options, -1), { label: 'backward' });
          assert.deepEqual(x.data, copy, 'x unchanged');
        });
      }
    }

    test('positions near 1e5 and 2^20 (given, or from an offset) keep float32 accuracy', () => {
      // An angle formed in float32 would be off by up to position * 2^-24 rad (0.06 at 2^20).
      const x = randomTensor(mulberry32(91), [2, 2, 5, 16]);
      for (const interleaved of [false, true]) {
        for (const options of [{ positions: LARGE, interleaved }, { offset: 2 ** 20 - 2, interleaved }]) {
          assertClose(attn.applyRotary(x, options), rotaryReference(x, options), { label: `forward ${JSON.stringify(options.offset)}` });
          assertClose(attn.applyRotaryBackward(x, options), rotaryReference(x, options, -1), { label: 'backward' });
        }
      }
    });

    test('the backward is the transpose and the inverse of the forward', () => {
      const rng = mulberry32(92);
      const x = randomTensor(rng, [2, 3, 7, 12]);
      const g = randomTensor(rng, [2, 3, 7, 12]);
      for (const options of [{}, { interleaved: true, dim: 8, offset: 300 }, { positions: tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7], [2, 7], Int32Array) }]) {
        const rx = attn.applyRotary(x, options);
        const rtg = attn.applyRotaryBackward(g, options);
        let left = 0;
        let right = 0;
        for (let i = 0; i < x.data.length; i++) {
          left += rx.data[i] * g.data[i];
          right += x.data[i] * rtg.data[i];
        }
        // 504 products each within ~5e-7 of |x| |g| <= 1: the sums agree to 504 * 5e-7.
        assert.ok(Math.abs(left - right) <= 2.5e-4, `<R x, g> = ${left} but <x, R^T g> = ${right}`);
        assertClose(attn.applyRotaryBackward(rx, options), x, { atol: 2e-6, rtol: 1e-5, label: 'R^T R x' });
      }
    });

    test('[B, H, n, d] with positions [B, n] rotates every head of a batch row alike', () => {
      const rng = mulberry32(93);
      const x = randomTensor(rng, [2, 3, 4, 6]);
      const positions = tensor([5, 6, 7, 8, 100, 0, 2, 2], [2, 4], Int32Array);
      const got = attn.applyRotary(x, { positions });
      for (let b = 0; b < 2; b++) {
        const rowPositions = positions.data.slice(b * 4, (b + 1) * 4);
        const slice = tensor(x.data.slice(b * 72, (b + 1) * 72), [3, 4, 6]);
        const one = attn.applyRotary(slice, { positions: rowPositions });
        assert.deepEqual(got.data.slice(b * 72, (b + 1) * 72), one.data, `batch row ${b}`);
      }
    });

    test('position 0, the features past dim and empty inputs are left as they are', () => {
      const x = randomTensor(mulberry32(94), [1, 2, 10]);
      const got = attn.applyRotary(x, { dim: 4, positions: [0, 3] });
      assert.deepEqual(got.data.slice(0, 10), x.data.slice(0, 10));
      assert.deepEqual(got.data.slice(14), x.data.slice(14));
      for (const shape of [[0, 3, 4], [2, 0, 4], [2, 3, 0, 4], [1, 2, 3, 0]]) {
        const empty = attn.applyRotary(tensor([], shape), shape.at(-1) === 0 ? {} : { interleaved: true });
        assert.deepEqual(empty.shape, shape);
        assert.equal(empty.data.length, 0);
      }
    });

    test('each bad argument is rejected naming it, and the module keeps working', () => {
      const x = randomTensor(mulberry32(95), [2, 2, 3, 8]);
      const options = { positions: tensor([1, 2, 3, 40, 50, 60], [2, 3], Int32Array), interleaved: true, dim: 6 };
      for (const [description, call, ErrorType, patterns] of ERROR_CASES) {
        assert.throws(() => call(attn), (error) => {
          assert.ok(error instanceof ErrorType, `${description}: expected a ${ErrorType.name}, got ${error?.name}: ${error?.message}`);
          for (const pattern of patterns) assert.match(error.message, pattern, description);
          return true;
        });
        assertClose(attn.applyRotary(x, options), rotaryReference(x, options), { label: `after ${description}` });
      }
    });
  });
}
