// d2l's BLEU in closed form (brevity penalty exp(min(0, 1 - len_label / len_pred)) times
// prod_n p_n^(1 / 2^n)), the scores d2l prints for its example translations, and the
// mean and by-length helpers computed by hand.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { importRepo } from './repo-module.js';

const { bleu, bleuByLength, corpusBleu, sentenceBleus } = await importRepo('web/shared/translation/bleu.js');

const close = (got, want, label) => assert.ok(Math.abs(got - want) <= 1e-14 * Math.max(1, Math.abs(want)), `${label}: ${got} vs ${want}`);

describe("d2l's BLEU", () => {
  test("d2l's examples: exact translations score 1.000, one without a matching bigram 0.000", () => {
    // d2l (sec_seq2seq_training) prints "go . => ['va', '!'], bleu,1.000" and the like.
    assert.equal(bleu('va !', 'va !', 2), 1);
    assert.equal(bleu("j'ai perdu .", "j'ai perdu .", 2), 1);
    assert.equal(bleu('je suis chez moi .', 'je suis chez moi .', 2), 1);
    assert.equal(bleu('il court .', 'il est calme .', 2), 0);
    // Token arrays read as the joined string.
    assert.equal(bleu(['je', 'suis', 'chez', 'moi', '.'], 'je suis chez moi .', 2), 1);
  });

  test('same length, partial matches: p1^(1/2) * p2^(1/4)', () => {
    // "il est riche ." vs "il est calme .": p1 = 3/4, p2 = 1/3 (only "il est"), no brevity penalty.
    close(bleu('il est riche .', 'il est calme .', 2), Math.sqrt(3 / 4) * (1 / 3) ** 0.25, 'k = 2');
    close(bleu('il est riche .', 'il est calme .', 1), Math.sqrt(3 / 4), 'k = 1');
  });

  test('a correct prefix is penalised for brevity only: exp(1 - len_label / len_pred)', () => {
    const label = 'a b c d e f';
    for (let len = 1; len <= 6; len++) {
      const pred = label.split(' ').slice(0, len).join(' ');
      for (const k of [1, 2, 3]) close(bleu(pred, label, k), Math.exp(1 - 6 / len), `prefix of ${len}, k = ${k}`);
    }
  });

  test('longer predictions are not penalised by length, only by precision', () => {
    // "a b c c" vs "a b c": p1 = 3/4 (the second c is clipped), p2 = 2/3 ("c c" unmatched).
    close(bleu('a b c c', 'a b c', 2), (3 / 4) ** 0.5 * (2 / 3) ** 0.25, 'a b c c');
  });

  test('matches are clipped by the label counts', () => {
    // Papineni et al.'s example: p1 = 2/4 ("the" occurs twice in the label), no bigram matches.
    close(bleu('the the the the', 'the cat is on the mat', 1), Math.exp(1 - 6 / 4) * Math.sqrt(2 / 4), 'k = 1');
    assert.equal(bleu('the the the the', 'the cat is on the mat', 2), 0);
  });

  test('orders beyond the prediction length are skipped (n <= min(k, len_pred))', () => {
    // One token that matches: p1 = 1, and no p2, p3 terms at all.
    close(bleu('a', 'a b c d', 4), Math.exp(1 - 4), 'k = 4');
  });

  test('character tokens of a date: one wrong digit', () => {
    // 10 tokens: 9 unigrams match (the label has three 2s, the prediction four); of the 9
    // bigrams all but the last ("2 2") match.
    close(bleu('2 0 2 6 - 1 1 - 2 2', '2 0 2 6 - 1 1 - 2 3', 2), (9 / 10) ** 0.5 * (8 / 9) ** 0.25, 'dates');
  });

  test('corpusBleu is the mean of sentence scores; bad arguments throw', () => {
    const preds = ['va !', 'il est riche .', 'il court .'];
    const labels = ['va !', 'il est calme .', 'il est calme .'];
    const each = [1, Math.sqrt(3 / 4) * (1 / 3) ** 0.25, 0];
    sentenceBleus(preds, labels, 2).forEach((s, i) => close(s, each[i], `sentence ${i}`));
    close(corpusBleu(preds, labels, 2), (each[0] + each[1] + each[2]) / 3, 'mean');
    assert.throws(() => corpusBleu(['a'], ['a', 'b'], 2), /preds, labels: expected two arrays of one length, given 1 and 2/);
    assert.throws(() => bleu('a', 'a', 0), /k: expected a positive integer, given 0/);
    assert.throws(() => bleu(3, 'a', 2), TypeError);
  });

  test('bleuByLength groups sentence scores by source length', () => {
    const lengths = [3, 1, 3, 7, 4, 8];
    const scores = [0.5, 1, 0.25, 0, 1, 0.5];
    assert.deepEqual(bleuByLength(lengths, scores), [
      { from: 1, to: 1, count: 1, bleu: 1 },
      { from: 3, to: 3, count: 2, bleu: 0.375 },
      { from: 4, to: 4, count: 1, bleu: 1 },
      { from: 7, to: 7, count: 1, bleu: 0 },
      { from: 8, to: 8, count: 1, bleu: 0.5 },
    ]);
    assert.deepEqual(bleuByLength(lengths, scores, { width: 3 }), [
      { from: 1, to: 3, count: 3, bleu: (1 + 0.5 + 0.25) / 3 },
      { from: 4, to: 6, count: 1, bleu: 1 },
      { from: 7, to: 9, count: 2, bleu: 0.25 },
    ]);
    assert.throws(() => bleuByLength([0], [1]), /srcLengths\[0\]: expected a positive integer, given 0/);
  });
});
