// Models trained side by side (web/shared/translation/side-by-side.js), as the page's comparison
// by source length trains them: from one seed, every kind must see the same batches in the same
// order, one step each in turn. The package's models are replaced by recorders of what each is
// given, so the test reads the batches themselves, and checks them against the task's training
// rows: each epoch covers every row once, in an order of its own.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { importRepo } from './repo-module.js';

const { SideBySide } = await importRepo('web/shared/translation/side-by-side.js');
const { MODELS } = await importRepo('web/shared/translation/trainer.js');
const { prepareTask } = await importRepo('web/shared/translation/tasks.js');

const KINDS = ['bahdanau', 'transformer', 'plain'];
const data = prepareTask('fra-eng-long');
const rowCount = data.train.srcValidLens.length;
const width = data.train.src.shape[1];

// A stand-in for the package's model classes: records every training step's inputs (in `log`,
// shared by all models, in call order) and translates everything to '<eos>' at once.
function recordingPackage(log) {
  class Recorder {
    constructor(config) {
      this.config = config;
      this.disposed = false;
    }

    trainStep(src, srcValidLens, tgtInput, tgtOutput) {
      log.push({ model: this, src: Array.from(src.data), lens: Array.from(srcValidLens), tgt: Array.from(tgtOutput.data) });
      return 1;
    }

    translate(src, srcValidLens, { eos, maxLen }) {
      const [B] = src.shape;
      return { tokens: { data: new Int32Array(B * maxLen).fill(eos), shape: [B, maxLen] }, lengths: new Int32Array(B).fill(1), attention: null };
    }

    dispose() {
      this.disposed = true;
    }
  }
  return { Seq2SeqAttention: class extends Recorder {}, Transformer: class extends Recorder {} };
}

// The training rows of a batch, found by their source row in the task's arrays: the generated
// training sources are all distinct (else the per-epoch coverage check below would fail).
const rowIndex = new Map();
for (let r = rowCount - 1; r >= 0; r--) rowIndex.set(data.train.src.data.subarray(r * width, (r + 1) * width).join(','), r);
const rowsOf = (step) => Array.from({ length: step.lens.length }, (_, i) => rowIndex.get(step.src.slice(i * width, (i + 1) * width).join(',')));

function trainTwoEpochs(seed) {
  const log = [];
  const models = new SideBySide(recordingPackage(log), data, { kinds: KINDS, seed });
  while (models.epoch < 2) models.step();
  return { log, models };
}

test('from one seed every kind gets the same batches in the same order, one step each in turn', () => {
  const { log, models } = trainTwoEpochs(3);
  const [first] = models.trainers;
  assert.equal(log.length % KINDS.length, 0);
  const stepsEach = log.length / KINDS.length;
  assert.deepEqual(models.trainers.map((t) => t.steps), KINDS.map(() => stepsEach));
  assert.equal(stepsEach, 2 * Math.ceil(rowCount / MODELS.bahdanau.training.batchSize), 'two epochs of batches');
  for (let s = 0; s < stepsEach; s++) {
    const turn = log.slice(s * KINDS.length, (s + 1) * KINDS.length);
    assert.deepEqual(turn.map((step) => step.model.config.seed), KINDS.map(() => 3));
    assert.deepEqual(turn.map((step) => models.trainers.find((t) => t.model === step.model).kind), KINDS, `step ${s}: in turn`);
    for (const step of turn.slice(1)) {
      assert.deepEqual([step.src, step.lens, step.tgt], [turn[0].src, turn[0].lens, turn[0].tgt], `step ${s}: the same batch`);
    }
  }
  // The batches are the task's rows: each epoch every row once, shuffled anew.
  const epochs = [0, 1].map((e) => log.filter((step) => step.model === first.model)
    .slice(e * stepsEach / 2, (e + 1) * stepsEach / 2).flatMap(rowsOf));
  for (const rows of epochs) assert.deepEqual([...rows].sort((a, b) => a - b), Array.from({ length: rowCount }, (_, i) => i));
  assert.notDeepEqual(epochs[0], epochs[1]);
  models.dispose();
});

test('another seed gives other batches', () => {
  const a = trainTwoEpochs(3).log[0];
  const b = trainTwoEpochs(4).log[0];
  assert.notDeepEqual(rowsOf(a), rowsOf(b));
});

test('the results are keyed by kind in turn order, and dispose releases every model', () => {
  const log = [];
  const models = new SideBySide(recordingPackage(log), data, { kinds: KINDS, seed: 0 });
  models.step();
  const results = models.evaluate();
  assert.deepEqual(Object.keys(results), KINDS);
  assert.deepEqual(KINDS.map((k) => results[k].attention), [true, true, false]);
  assert.deepEqual(KINDS.map((k) => results[k].steps), [1, 1, 1]);
  // Every translation is empty: BLEU 0 over all lengths and over the long sources.
  for (const k of KINDS) assert.deepEqual([results[k].bleu, results[k].long], [0, 0]);
  models.dispose();
  assert.ok(models.trainers.every((t) => t.model.disposed));
});

test('kinds whose batch sizes differ are refused: their batches would differ', () => {
  const saved = MODELS.transformer.training;
  MODELS.transformer.training = { ...saved, batchSize: 16 };
  try {
    assert.throws(() => new SideBySide(recordingPackage([]), data, { kinds: KINDS, seed: 0 }), {
      name: 'RangeError', message: /kinds: expected one batch size for bahdanau, transformer, plain, given 32, 16, 32/,
    });
  } finally {
    MODELS.transformer.training = saved;
  }
});
