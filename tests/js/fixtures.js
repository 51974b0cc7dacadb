// Reads the PyTorch reference fixtures (tests/fixtures/, written by scripts/fixtures/*.py) from
// the repository named by ATTN_REPO, turns their JSON into the API's arguments, and checks
// results with the fixtures' rule.
//
// A fixture file is { description, cases: [{ name, inputs, options, expected }] }; a tensor is
// { shape, data: flat row-major numbers }, masks and lengths also carry dtype ('bool' with
// 1 = masked out, 'int32', or 'float32' for an additive mask).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { assertClose } from '../../harness/reference.js';

/** The cases of tests/fixtures/<file> (e.g. 'gradients/sdpa.json'). */
export function loadFixture(file) {
  const repo = process.env.ATTN_REPO;
  assert.ok(repo, 'ATTN_REPO (the repository root) is not set');
  const { cases } = JSON.parse(readFileSync(join(repo, 'tests', 'fixtures', file), 'utf8'));
  assert.ok(cases.length > 0, `${file} has no cases`);
  return cases;
}

/** A fixture tensor as the API's float32 tensor. */
export const floatTensor = ({ data, shape }) => ({ data: Float32Array.from(data), shape: [...shape] });

// A bool mask as Uint8Array, an additive one as Float32Array, keeping the shape.
function maskTensor({ data, shape, dtype = 'bool' }) {
  const ArrayType = dtype === 'float32' ? Float32Array : Uint8Array;
  return { data: ArrayType.from(data), shape: [...shape] };
}

// [B] lengths as an Int32Array, [B, nq] as a tensor (the API reads a bare array as [B]).
function validLens({ data, shape }) {
  const lens = Int32Array.from(data);
  return shape.length === 1 ? lens : { data: lens, shape: [...shape] };
}

/** { validLens, mask, causal, scale } for scaledDotProductAttention(Backward), as given. */
export function sdpaOptions(options) {
  const out = {};
  if (options.validLens) out.validLens = validLens(options.validLens);
  if (options.mask) out.mask = maskTensor(options.mask);
  if (options.causal !== undefined) out.causal = options.causal;
  if (options.scale !== undefined) out.scale = options.scale;
  return out;
}

/** { Wq, Wk, wv, validLens } for additiveAttention(Backward). */
export function additiveOptions(options) {
  const out = { Wq: floatTensor(options.Wq), Wk: floatTensor(options.Wk), wv: floatTensor(options.wv) };
  if (options.validLens) out.validLens = validLens(options.validLens);
  return out;
}

/** { keyPaddingMask, attnMask } for mha.forward / mha.backward, as given. */
export function multiHeadOptions(options) {
  const out = {};
  if (options.keyPaddingMask) out.keyPaddingMask = maskTensor(options.keyPaddingMask);
  if (options.attnMask) out.attnMask = maskTensor(options.attnMask);
  return out;
}

/** The case's module: new MultiHeadAttention(inputs.config).loadStateDict(inputs.stateDict). */
export function multiHeadAttention(attn, inputs) {
  const dict = Object.fromEntries(Object.entries(inputs.stateDict).map(([name, t]) => [name, floatTensor(t)]));
  return new attn.MultiHeadAttention(inputs.config).loadStateDict(dict);
}

const peak = (t) => t.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

// The largest |entry| of all of a case's expected tensors (nested objects included).
const casePeak = (expected) =>
  Object.values(expected).reduce((m, t) => Math.max(m, t.data ? peak(t) : casePeak(t)), 0);

/**
 * The fixtures' rule (issue 10): |got - want| <= 2e-4 * max|want| over the tensor, shapes equal.
 * A reference that vanishes exactly (dq with one key, where the softmax is constant) is held to
 * 2e-4 of the case's largest reference entry instead: float rounding of its cancelling sums.
 */
export function assertFixtureClose(got, want, caseExpected, label) {
  assert.ok(got && got.data && got.shape, `${label}: expected a tensor { data, shape }, got ${got}`);
  const scale = peak(want) || casePeak(caseExpected);
  assertClose(got, want, { atol: 2e-4 * scale, rtol: 0, label });
}

// The encoder-decoder models' fixtures (seq2seq/, transformer/): a case's token batch, its state
// dict as float32 tensors, and named tensors (gradients, a state dict) against the case's.
const ints = ({ data, shape }) => ({ data: Int32Array.from(data), shape: [...shape] });

/** A case's model class instance with the case's config and state dict loaded. */
export function encoderDecoderModel(ModelClass, inputs) {
  const dict = Object.fromEntries(Object.entries(inputs.stateDict).map(([name, t]) => [name, floatTensor(t)]));
  return new ModelClass({ ...inputs.config }).loadStateDict(dict);
}

/** [src, srcValidLens, tgtInput, tgtOutput] of a case. */
export function encoderDecoderBatch(inputs) {
  return [ints(inputs.src), Int32Array.from(inputs.srcValidLens.data), ints(inputs.tgtInput), ints(inputs.tgtOutput)];
}

export function assertNamedClose(got, want, expected, label) {
  assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), `${label}: names`);
  for (const [name, tensor] of Object.entries(want)) assertFixtureClose(got[name], tensor, expected, `${label} ${name}`);
}

/** Greedy tokens against the fixture's, which d2l keeps predicting after eos (ours repeat eos). */
export function assertGreedyTokens(translation, expected, options) {
  const steps = options.maxLen, want = expected.translationTokens.data;
  for (let b = 0; b < translation.lengths.length; b++) {
    const row = [...want.slice(b * steps, (b + 1) * steps)];
    const end = row.indexOf(options.eos);
    const expectedRow = end < 0 ? row : row.map((t, i) => (i > end ? options.eos : t));
    assert.deepEqual([...translation.tokens.data.slice(b * steps, (b + 1) * steps)], expectedRow, `row ${b}`);
    assert.equal(translation.lengths[b], end < 0 ? steps : end + 1);
  }
}

/** Two clipped Adam steps (trainStep) on the case's batch: the losses before each, the weights after. */
export function assertTwoAdamSteps(model, batch, { options, expected }) {
  for (const [step, want] of expected.trainLosses.entries()) {
    const loss = model.trainStep(...batch, { pad: options.pad, lr: options.lr, clip: options.clip });
    assert.ok(Math.abs(loss - want) <= 2e-4 * Math.abs(want), `loss before step ${step + 1}: ${loss} vs ${want}`);
  }
  assertNamedClose(model.stateDict(), expected.afterTwoSteps, expected, 'after two steps');
}
