// The page's log of past runs (web/src/sections/seq2seq/past-runs.js), which every seq2seq
// section reads and writes: a run that trained on the page is kept, as it trains, as the last run
// of its kind on its task, and a section's BLEU chart draws beside its run those of the kinds it
// names on the same task, never its own kind's nor another task's; the kinds with no run yet are
// the ones the chart says it lacks.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { importRepo } from './repo-module.js';

const { addEval, addProgress, freshView, missingRunsLine } = await importRepo('web/src/sections/seq2seq/compute.js');
const { runLog } = await importRepo('web/src/sections/seq2seq/past-runs.js');

// A view of `kind` on `task` that trained `evals` BLEU measurements (one progress report first),
// each recorded in `log` as the worker's reports are.
function trainedView(log, kind, task, evals) {
  const view = freshView(1, null, { kind, task });
  addProgress(view, { steps: 10, epoch: 0.1, loss: 2, seconds: 1, tokensPerSecond: 100 });
  evals.forEach(([seconds, bleu], i) => {
    addEval(view, { seconds, bleu, steps: 10 * i, exact: 0, epoch: 0.1 });
    log.record(view);
  });
  return view;
}

// The kinds a chart draws beside its run: Bahdanau's alone, or both GRUs.
const BAHDANAU = ['bahdanau'];
const GRUS = ['bahdanau', 'plain'];
const kinds = (log, view, beside) => log.beside(view, beside).map((r) => r.kind);

test('a run is kept as it trains, as the last of its kind, and drawn beside the other kinds only', () => {
  const log = runLog();
  let changes = 0;
  log.onChange(() => {
    changes += 1;
  });
  const transformer = freshView(2, null, { kind: 'transformer', task: 'fra-eng' });
  trainedView(log, 'bahdanau', 'fra-eng', [[0, 0], [1, 0.4], [2, 0.8]]);
  assert.equal(changes, 2, 'recorded from its second measurement on');
  assert.deepEqual(kinds(log, transformer, BAHDANAU), ['bahdanau']);
  assert.deepEqual(log.beside(transformer, BAHDANAU)[0].points.map((p) => [p.seconds, p.bleu]), [[0, 0], [1, 0.4], [2, 0.8]]);
  assert.match(log.beside(transformer, BAHDANAU)[0].label, /^Bahdanau.*last run on this page$/);
  assert.deepEqual(log.missing(transformer, BAHDANAU), []);
  // Bahdanau's own run is not drawn beside it; the plain GRU's is, once it trained.
  const shippedBahdanau = freshView(3, null, { kind: 'bahdanau', task: 'fra-eng' });
  assert.deepEqual(kinds(log, shippedBahdanau, GRUS), []);
  assert.deepEqual(log.missing(shippedBahdanau, GRUS), ['plain']);
  trainedView(log, 'plain', 'fra-eng', [[0, 0], [1, 0.1]]);
  assert.deepEqual(kinds(log, shippedBahdanau, GRUS), ['plain']);
  // A newer Bahdanau run replaces the older one.
  trainedView(log, 'bahdanau', 'fra-eng', [[0, 0], [3, 0.9]]);
  assert.deepEqual(log.beside(transformer, BAHDANAU).map((r) => r.points.length), [2]);
});

test('a shipped model (no training here), a run of one measurement or another task leaves nothing beside', () => {
  const log = runLog();
  const transformer = freshView(1, null, { kind: 'transformer', task: 'fra-eng' });
  const shipped = freshView(2, null, { kind: 'bahdanau', task: 'fra-eng' });
  addEval(shipped, { seconds: 0, bleu: 0.98, steps: 1120, exact: 0.9, epoch: 20 });
  log.record(shipped);
  assert.deepEqual(kinds(log, transformer, BAHDANAU), []);
  trainedView(log, 'bahdanau', 'fra-eng', [[0, 0]]);
  assert.deepEqual(kinds(log, transformer, BAHDANAU), []);
  trainedView(log, 'bahdanau', 'dates', [[0, 0], [1, 0.5]]);
  assert.deepEqual(kinds(log, transformer, BAHDANAU), []);
  assert.deepEqual(log.missing(transformer, BAHDANAU), ['bahdanau']);
  assert.deepEqual(kinds(log, freshView(3, null, { kind: 'transformer', task: 'dates' }), BAHDANAU), ['bahdanau']);
});

test('the chart names the runs it lacks, and says nothing when it lacks none', () => {
  assert.equal(missingRunsLine([], 'train one'), null);
  assert.equal(missingRunsLine(['bahdanau'], 'train one in section 5'),
    'No run of “Bahdanau (GRU + attention)” on this page for this task yet: train one in section 5.');
});
