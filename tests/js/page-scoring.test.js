// The computation behind the page's section 3 (web/src/sections/scoring/compute.js), without a
// page: the 2-D example against the double-precision reference and the closed forms the section
// states, the √d experiment's scaling, and d2l's masked softmax, in the three builds.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { importRepo } from './repo-module.js';
import * as ref from '../../harness/reference.js';

const { assertClose, assertRowsSumToOne, tensor } = ref;
const {
  ADDITIVE, D_EXPONENTS, MASK_KEYS, MASK_QUERIES, MASK_SCORES, SAMPLES, SCORE_FUNCTIONS, maskedExample, planeScores,
  sqrtDExperiment,
} = await importRepo('web/src/sections/scoring/compute.js');

for (const attn of backends) {
  describe(`section 3's computation (${labelOf(attn)})`, () => {
    const example = { theta: 35, r: 1.5, phi: 60, equalKeys: false };

    test('every scoring function and its softmax match the reference', () => {
      const { qv, keys, perFunction } = planeScores(attn, example);
      const p = (60 * Math.PI) / 180;
      const W = tensor([Math.cos(p), -Math.sin(p), Math.sin(p), Math.cos(p)], [2, 2]);
      const q = tensor(qv, [1, 1, 2]);
      const k = tensor(keys.flat(), [1, keys.length, 2]);
      assert.deepEqual(perFunction.map(({ fn }) => fn), SCORE_FUNCTIONS);
      for (const { fn, scores, weights } of perFunction) {
        const want = ref.score(q, k, { fn, ...ADDITIVE, W });
        assertClose(scores, want.data, { label: `${fn} scores` });
        assertClose(weights, ref.softmax(want).data, { label: `${fn} weights` });
      }
    });

    test("the Gaussian kernel's weights are the softmax of −½‖q − k‖², as the section says", () => {
      const { perFunction, gaussian } = planeScores(attn, { ...example, equalKeys: true });
      const neg = perFunction.find(({ fn }) => fn === 'neg-sq-dist');
      assertClose(gaussian, neg.weights, { label: 'gaussian vs softmax(−½‖q − k‖²)' });
    });

    test('with keys of equal length, dot and −½‖q − k‖² give the same weights (shift invariance)', () => {
      const { perFunction } = planeScores(attn, { ...example, equalKeys: true });
      const dot = perFunction.find(({ fn }) => fn === 'dot');
      const neg = perFunction.find(({ fn }) => fn === 'neg-sq-dist');
      assertClose(dot.weights, neg.weights, { label: 'dot vs neg-sq-dist' });
    });

    test('√d: the scaled scores are the dot scores / √d, and scaling keeps the softmax from saturating', () => {
      const experiment = sqrtDExperiment(attn);
      for (const d of [1, 64, 1024]) {
        const { raw, scaled, rawSoft, scaledSoft } = experiment.at(d);
        assertClose(scaled, Float64Array.from(raw, (x) => x / Math.sqrt(d)), { label: `d = ${d}` });
        assertRowsSumToOne({ data: rawSoft, shape: [SAMPLES, SAMPLES] });
        assertRowsSumToOne({ data: scaledSoft, shape: [SAMPLES, SAMPLES] });
      }
      const curve = experiment.curve();
      assert.deepEqual(curve.map(({ d }) => d), D_EXPONENTS.map((e) => 2 ** e));
      const last = curve[curve.length - 1];
      assert.ok(last.raw > 0.9, `unscaled, d = 1024: mean largest weight ${last.raw}`); // nearly one-hot
      assert.ok(last.scaled < 0.3, `scaled, d = 1024: mean largest weight ${last.scaled}`);
      assert.equal(experiment.curve(), curve); // computed once
    });

    test("masked softmax: d2l's valid lengths zero the masked keys; -inf turns an empty row NaN", () => {
      const { masked } = maskedExample(attn, [0, 6], '-1e6');
      assertClose(masked, ref.maskedSoftmax(MASK_SCORES, Int32Array.from([0, 6])).data);
      const rows = Array.from({ length: 2 * MASK_QUERIES }, (_, r) => masked.subarray(r * MASK_KEYS, (r + 1) * MASK_KEYS));
      for (const row of rows.slice(0, MASK_QUERIES)) assertClose(row, new Float64Array(MASK_KEYS).fill(1 / MASK_KEYS)); // length 0: uniform
      for (const row of rows.slice(MASK_QUERIES)) assert.deepEqual(Array.from(row.subarray(6)), [0, 0, 0, 0]); // exactly 0
      assert.ok(maskedExample(attn, [0, 6], '-inf').masked.subarray(0, MASK_KEYS).every(Number.isNaN));
    });
  });
}
