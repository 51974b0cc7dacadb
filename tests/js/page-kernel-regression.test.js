// The computation behind the page's section 2 (web/src/sections/kernel-regression/compute.js),
// without a page: d2l's data, and every plotted number against the double-precision reference
// (harness/reference.js), in the three builds.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { importRepo } from './repo-module.js';
import * as ref from '../../harness/reference.js';

const { assertClose, tensor, LOOSE } = ref;
const {
  CLASSES, FIT_QUERIES, HEAT_QUERIES, LOO_BANDWIDTHS, N, SHAPE_GRID, X_MAX, classOf, computeRegression, f,
  leaveOneOutSearch, makePoints,
} = await importRepo('web/src/sections/kernel-regression/compute.js');

test("makePoints draws d2l's training set: N sorted x in [0, 5), y = f(x) + noise, the same per seed", () => {
  const points = makePoints(1);
  assert.equal(points.length, N);
  for (let i = 0; i < N; i++) {
    assert.ok(points[i].x >= 0 && points[i].x < X_MAX);
    if (i) assert.ok(points[i - 1].x <= points[i].x);
  }
  assert.deepEqual(makePoints(1), points);
  assert.notDeepEqual(makePoints(2), points);
  const residuals = points.map((p) => p.y - f(p.x));
  const mean = residuals.reduce((a, b) => a + b, 0) / N;
  assert.ok(Math.abs(mean) < 0.6, `noise mean ${mean}`); // N(0, 1): |mean| < 0.6 is 3.8 standard errors
});

for (const attn of backends) {
  describe(`section 2's computation (${labelOf(attn)})`, () => {
    const points = makePoints(3);
    const keys = tensor(points.map((p) => p.x), [N]);
    const values = tensor(points.map((p) => p.y), [N]);
    const oneHot = tensor(points.flatMap((p) => CLASSES.map((_, c) => (classOf(p.y) === c ? 1 : 0))), [N, CLASSES.length]);

    for (const kernel of ['gaussian', 'boxcar', 'epanechnikov', 'constant']) {
      test(`${kernel}: the fit, heatmap weights, kernel shapes and class probabilities match the reference`, () => {
        const r = computeRegression(attn, points, kernel, 0.7, true);
        const want = (queries, v = values) => ref.kernelRegression({ keys, values: v, queries: tensor(queries, [queries.length]), kernel, bandwidth: 0.7 });
        assertClose(r.fit, want(FIT_QUERIES).output.data, { label: 'fit' });
        const heat = want(HEAT_QUERIES);
        assertClose(r.heatOutput, heat.output.data, { label: 'heat output' });
        // The reference's weight rows are scaled by a constant: normalise them first.
        const weights = Float64Array.from(heat.weights.data);
        for (let i = 0; i < HEAT_QUERIES.length; i++) {
          const row = weights.subarray(i * N, (i + 1) * N);
          const total = row.reduce((a, b) => a + b, 0);
          row.forEach((w, j) => { row[j] = total > 0 ? w / total : NaN; });
        }
        assertClose(r.weights, weights, { label: 'weights' });
        assertClose(r.probs, want(FIT_QUERIES, oneHot).output.data, { label: 'class probabilities' });
        for (const { name, K } of r.shapeCurves) {
          const distances = tensor(SHAPE_GRID.map(Math.abs), [SHAPE_GRID.length]);
          assertClose(K, ref.kernelValues({ distances, kernel: name, bandwidth: 0.7 }).data, { label: `K ${name}` });
        }
      });
    }

    test('without classification there are no class probabilities', () => {
      assert.equal(computeRegression(attn, points, 'gaussian', 0.5, false).probs, null);
    });

    test('the leave-one-out search matches the reference, on y and on the one-hot classes', () => {
      for (const cls of [false, true]) {
        const got = leaveOneOutSearch(attn, points, 'gaussian', cls);
        const want = ref.leaveOneOut({ keys, values: cls ? oneHot : values, kernel: 'gaussian', bandwidths: Float32Array.from(LOO_BANDWIDTHS) });
        assertClose(got.errors, want.errors, { ...LOOSE, label: `errors (cls ${cls})` });
        assert.equal(got.best, want.best);
      }
    });
  });
}
