// The words of section 5's comparison by source length (web/src/sections/seq2seq/compute.js):
// its status while training, its figures' line and the sentence under its figure, from a
// hand-written 'compare' report whose leader and margins are known by construction, so that
// the sentence says what that run shows and nothing else.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { importRepo } from './repo-module.js';

const { compareCaption, compareLine, comparingLine, longSentenceBleu } = await importRepo('web/src/sections/seq2seq/compute.js');

// A result of one model: BLEU over all lengths, over the long sources, and two buckets of 3 words.
const result = (attention, bleu, long) => ({
  attention, steps: 425, bleu, exact: 0, long,
  byLength: [{ from: 1, to: 3, count: 10, bleu }, { from: 19, to: 21, count: 20, bleu: long }],
});
const report = (results) => ({ type: 'compare', epochs: 5, seed: 0, results });
const RUN = report({ bahdanau: result(true, 0.966, 0.901), transformer: result(true, 0.675, 0.536), plain: result(false, 0.363, 0.339) });

test('the long sources’ BLEU is keyed by kind, in the report’s order', () => {
  assert.deepEqual(Object.entries(longSentenceBleu(RUN.results)), [['bahdanau', 0.901], ['transformer', 0.536], ['plain', 0.339]]);
});

test('the status names the models it trains', () => {
  assert.equal(comparingLine(['bahdanau', 'transformer', 'plain']), 'training Bahdanau, Transformer, and no attention side by side');
  assert.equal(comparingLine(['bahdanau', 'plain']), 'training Bahdanau and no attention side by side');
});

test('the figures’ line gives each model’s BLEU from 20 words on and over all lengths', () => {
  assert.equal(compareLine(RUN), 'After 5 epochs each (425 steps): held-out BLEU from 20 words on 0.901 Bahdanau, '
    + '0.536 Transformer, 0.339 no attention; over all lengths 0.966, 0.675, 0.363.');
  assert.match(compareLine({ ...RUN, epochs: 1 }), /^After 1 epoch each /);
});

test('the sentence under the figure says what it draws and who leads from 20 words on, by how much', () => {
  assert.equal(compareCaption(RUN), 'Held-out BLEU of each model by source length (in buckets of 3 words), after 5 epochs '
    + 'each from seed 0 on the same batches. On held-out sources of 20 words or more, Bahdanau leads: by 0.365 over '
    + 'Transformer and by 0.562 over no attention.');
});

test('the leader is whichever model this run puts first, attention or not', () => {
  const flipped = report({ bahdanau: result(true, 0.5, 0.3), transformer: result(true, 0.6, 0.45), plain: result(false, 0.7, 0.5) });
  assert.match(compareCaption(flipped), /On held-out sources of 20 words or more, no attention leads: by 0\.050 over Transformer and by 0\.200 over Bahdanau\.$/);
});

test('without long held-out sources the sentence says so and ranks nothing', () => {
  const short = report({ bahdanau: result(true, 0.9, NaN), plain: result(false, 0.4, NaN) });
  assert.match(compareCaption(short), /\. No held-out source has 20 words or more\.$/);
  assert.match(compareLine(short), /from 20 words on — Bahdanau, — no attention;/);
});
