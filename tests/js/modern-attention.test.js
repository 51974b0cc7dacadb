// Grouped-query attention in the 4-D layout and the score modifiers (sliding window, softcap,
// ALiBi, sinks) with each row's log-sum-exp, against PyTorch in the three builds: the fixtures
// in tests/fixtures/modern/sdpa.json, written by scripts/fixtures/modern_attention.py in float64
// from float32 inputs. Tolerance, the fixtures' rule: |got - want| <= 2e-4 * max|want| per
// tensor; the lse also entry by entry within 2e-4 * max(1, |want|), so that a fully masked row's
// -1e6 does not loosen the check of the other rows. Then the options' validation: a TypeError or
// RangeError naming the option, after which the module still computes correctly.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as fx from './fixtures.js';

const cases = fx.loadFixture('modern/sdpa.json');

/**
 * The API's options for a case: validLens and mask (in the case's inputs) and causal, scale
 * through fx.sdpaOptions, then window, softcap, alibiSlopes, sinks and fill. The slopes and sinks
 * go as number[] in even cases and as Float32Array in odd ones (the API takes both); a fill of
 * "-Infinity" (JSON has no infinities) becomes -Infinity.
 */
function caseOptions({ inputs, options }, index) {
  const out = fx.sdpaOptions({ ...options, validLens: inputs.validLens, mask: inputs.mask });
  const floats = (values) => (index % 2 === 0 ? [...values] : Float32Array.from(values));
  if (options.window !== undefined) out.window = [...options.window];
  if (options.softcap !== undefined) out.softcap = options.softcap;
  if (options.alibiSlopes !== undefined) out.alibiSlopes = floats(options.alibiSlopes);
  if (options.sinks !== undefined) out.sinks = floats(options.sinks);
  if (options.fill !== undefined) out.fill = Number(options.fill);
  return out;
}

/** The lse: the fixtures' rule, then entry by entry |got - want| <= 2e-4 * max(1, |want|). */
function assertLseClose(got, expected) {
  fx.assertFixtureClose(got, expected.lse, expected, 'lse');
  expected.lse.data.forEach((want, i) => {
    const error = Math.abs(got.data[i] - want);
    assert.ok(error <= 2e-4 * Math.max(1, Math.abs(want)), `lse[${i}]: got ${got.data[i]}, want ${want}`);
  });
}

const inputsOf = ({ inputs }) => [inputs.q, inputs.k, inputs.v, inputs.gradOutput].map(fx.floatTensor);

/** Forward (output, weights when the fixture has them, lse) and backward of one case. */
function assertCase(attn, c, index) {
  const { expected } = c;
  const [q, k, v, gradOutput] = inputsOf(c);
  const options = caseOptions(c, index);
  const result = attn.scaledDotProductAttention(q, k, v, { ...options, returnLse: true, weights: Boolean(expected.weights) });
  fx.assertFixtureClose(result.output, expected.output, expected, 'output');
  if (expected.weights) fx.assertFixtureClose(result.weights, expected.weights, expected, 'weights');
  assertLseClose(result.lse, expected);

  const grads = attn.scaledDotProductAttentionBackward(q, k, v, gradOutput, options);
  for (const key of ['dq', 'dk', 'dv']) fx.assertFixtureClose(grads[key], expected[key], expected, key);
  if (expected.dsinks) fx.assertFixtureClose(grads.dsinks, expected.dsinks, expected, 'dsinks');
  else assert.equal(grads.dsinks, undefined, 'dsinks without sinks');
}

for (const attn of backends) {
  describe(`PyTorch fixtures, grouped-query attention and score modifiers (${labelOf(attn)})`, () => {
    cases.forEach((c, index) => {
      test(c.name, () => assertCase(attn, c, index));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Validation of the new options

const zeros = (shape) => ({ data: new Float32Array(shape.reduce((a, b) => a * b, 1)), shape });
const q = zeros([1, 2, 4, 8]);
const kv = zeros([1, 1, 4, 8]);
const gradOutput = zeros([1, 2, 4, 8]);

/** Asserts fn throws ErrorType with a message matching pattern. */
function assertThrowsNamed(fn, ErrorType, pattern) {
  assert.throws(fn, (error) => {
    assert.ok(error instanceof ErrorType, `expected a ${ErrorType.name}, got ${error?.name}: ${error?.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

// [description, options for q [1, 2, 4, 8] and k, v [1, 1, 4, 8], error type, message pattern]
const BAD_OPTIONS = [
  ['window [-2, 0]', { window: [-2, 0] }, RangeError, /window/],
  ['window [1.5, 0]', { window: [1.5, 0] }, RangeError, /window/],
  ["window 'x'", { window: 'x' }, TypeError, /window/],
  ['softcap 0', { softcap: 0 }, RangeError, /softcap/],
  ['softcap NaN', { softcap: NaN }, RangeError, /softcap/],
  ['alibiSlopes of length 1 for 2 heads', { alibiSlopes: [0.5] }, RangeError, /alibiSlopes/],
  ['alibiSlopes of length 3 for 2 heads', { alibiSlopes: new Float32Array(3) }, RangeError, /alibiSlopes/],
  ['sinks with a NaN', { sinks: [0, NaN] }, RangeError, /sinks/],
];

for (const attn of backends) {
  describe(`grouped-query attention options: validation (${labelOf(attn)})`, () => {
    test("q's heads not a multiple of k's: a RangeError naming k", () => {
      const q3 = zeros([1, 3, 4, 8]);
      const k2 = zeros([1, 2, 4, 8]);
      assertThrowsNamed(() => attn.scaledDotProductAttention(q3, k2, k2), RangeError, /\bk\b/);
      assertThrowsNamed(() => attn.scaledDotProductAttentionBackward(q3, k2, k2, zeros([1, 3, 4, 8])), RangeError, /\bk\b/);
    });

    for (const [description, options, ErrorType, pattern] of BAD_OPTIONS) {
      test(`${description}: a ${ErrorType.name} naming the option`, () => {
        assertThrowsNamed(() => attn.scaledDotProductAttention(q, kv, kv, options), ErrorType, pattern);
        assertThrowsNamed(() => attn.scaledDotProductAttentionBackward(q, kv, kv, gradOutput, options), ErrorType, pattern);
      });
    }

    test('windows as wide as an int32 allows hide nothing (no side wraps around)', () => {
      const rng = (seed) => Float32Array.from({ length: 2 * 40 * 8 }, (_, i) => Math.sin(seed * (i + 1)));
      const x = (seed, heads) => ({ data: rng(seed).subarray(0, heads * 40 * 8), shape: [1, heads, 40, 8] });
      const [qw, kw, vw] = [x(1, 2), x(2, 1), x(3, 1)];
      const max = 2 ** 31 - 1;
      const same = (a, b) => assert.deepEqual(Array.from(a.output.data), Array.from(b.output.data));
      same(attn.scaledDotProductAttention(qw, kw, vw, { window: [max, max] }), attn.scaledDotProductAttention(qw, kw, vw));
      same(attn.scaledDotProductAttention(qw, kw, vw, { window: [max, 0], causal: true }),
        attn.scaledDotProductAttention(qw, kw, vw, { causal: true }));
      same(attn.scaledDotProductAttention(qw, kw, vw, { window: [-1, max] }), attn.scaledDotProductAttention(qw, kw, vw));
    });

    test('after the errors the module still computes correctly', () => {
      // The case with every modifier together, and the first 4-D one.
      const together = cases.findIndex((c) => c.options.sinks && c.options.softcap && c.options.alibiSlopes && c.options.window);
      const fourD = cases.findIndex((c) => c.inputs.q.shape.length === 4);
      assert.ok(together >= 0 && fourD >= 0);
      for (const index of [together, fourD]) assertCase(attn, cases[index], index);
    });
  });
}
