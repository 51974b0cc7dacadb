// Section 5's memory of past runs (web/src/sections/bahdanau/compute.js): when a run is replaced
// (another model, a task, a fresh start, a reset), a run that trained on the page leaves its BLEU
// curve as the last run of its kind on its task, and the BLEU chart shows beside a run those of
// the other kinds on the same task, never its own kind's nor another task's.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { importRepo } from './repo-module.js';

const { addEval, addProgress, freshView, pastRunsBeside, replaceView } = await importRepo('web/src/sections/bahdanau/compute.js');

// A view of `kind` on `task` that trained `evals` BLEU measurements (one progress report first).
function trainedView(run, kind, task, evals) {
  const view = freshView(run, null, { kind, task });
  addProgress(view, { steps: 10, epoch: 0.1, loss: 2, seconds: 1, tokensPerSecond: 100 });
  evals.forEach(([seconds, bleu], i) => addEval(view, { seconds, bleu, steps: 10 * i, exact: 0, epoch: 0.1 }));
  return view;
}

const kinds = (current) => pastRunsBeside(current).map((r) => r.kind);

test('a run trained here is kept as the last of its kind, and shown beside the other kinds only', () => {
  const current = { view: trainedView(1, 'bahdanau', 'fra-eng', [[0, 0], [1, 0.4], [2, 0.8]]), pastRuns: {} };
  replaceView(current, 2, { kind: 'transformer', task: 'fra-eng' });
  assert.deepEqual(kinds(current), ['bahdanau']);
  assert.deepEqual(pastRunsBeside(current)[0].points.map((p) => [p.seconds, p.bleu]), [[0, 0], [1, 0.4], [2, 0.8]]);
  assert.match(pastRunsBeside(current)[0].label, /^Bahdanau.*last run on this page$/);
  // Back to Bahdanau: its own past run is not drawn beside it.
  replaceView(current, 3, { kind: 'bahdanau', task: 'fra-eng' });
  assert.deepEqual(kinds(current), []);
  // A newer Bahdanau run replaces the older one.
  current.view = trainedView(4, 'bahdanau', 'fra-eng', [[0, 0], [3, 0.9]]);
  replaceView(current, 5, { kind: 'transformer', task: 'fra-eng' });
  assert.deepEqual(pastRunsBeside(current).map((r) => r.points.length), [2]);
});

test('a shipped model (no training here), a run of one measurement or another task leaves nothing beside', () => {
  const shipped = freshView(1, null, { kind: 'bahdanau', task: 'fra-eng' });
  addEval(shipped, { seconds: 0, bleu: 0.98, steps: 1120, exact: 0.9, epoch: 20 });
  const current = { view: shipped, pastRuns: {} };
  replaceView(current, 2, { kind: 'transformer', task: 'fra-eng' });
  assert.deepEqual(kinds(current), []);
  current.view = trainedView(3, 'bahdanau', 'fra-eng', [[0, 0]]);
  replaceView(current, 4, { kind: 'transformer', task: 'fra-eng' });
  assert.deepEqual(kinds(current), []);
  current.view = trainedView(5, 'bahdanau', 'dates', [[0, 0], [1, 0.5]]);
  replaceView(current, 6, { kind: 'transformer', task: 'fra-eng' });
  assert.deepEqual(kinds(current), []);
  replaceView(current, 7, { kind: 'transformer', task: 'dates' });
  assert.deepEqual(kinds(current), ['bahdanau']);
});
