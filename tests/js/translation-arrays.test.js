// Vocabulary, padding and batches as d2l builds them, checked by properties on the generated
// corpus (valid lengths, '<bos>'/'<eos>' placement, the teacher-forcing shift), d2l's documented
// example, unknown words reported rather than dropped, and the argument errors.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { importRepo } from './repo-module.js';

const dir = 'web/shared/translation';
const { buildArrays, buildDataset, decodeTokens, encodeSources } = await importRepo(`${dir}/arrays.js`);
const { batches, takeRows } = await importRepo(`${dir}/batches.js`);
const { Vocab } = await importRepo(`${dir}/vocab.js`);
const { generateFraEng } = await importRepo(`${dir}/fra-eng.js`);
const { generateDates } = await importRepo(`${dir}/dates.js`);

const row = ({ data, shape: [, width] }, r) => Array.from(data.subarray(r * width, (r + 1) * width));

describe('translation arrays (d2l semantics)', () => {
  test("d2l's example: build(['hi .'], ['salut .']) with num_steps 9", () => {
    // d2l prints source: ['hi', '.', '<eos>', '<pad>', ...] and target: ['<bos>', 'salut', '.',
    // '<eos>', '<pad>', ...], each 9 tokens.
    const corpus = [
      { src: 'hi .', tgt: 'salut .' },
      { src: 'go .', tgt: 'va !' },
      { src: 'hi .', tgt: 'salut .' },
      { src: 'go .', tgt: 'va !' },
    ];
    const { srcVocab, tgtVocab } = buildArrays(corpus, { numSteps: 9 });
    const got = buildArrays([{ src: 'hi .', tgt: 'salut .' }], { numSteps: 9, srcVocab, tgtVocab });
    const pads = (n) => Array(n).fill('<pad>');
    assert.deepEqual(srcVocab.toTokens(row(got.src, 0)), ['hi', '.', '<eos>', ...pads(6)]);
    assert.deepEqual(tgtVocab.toTokens(row(got.tgtInput, 0)), ['<bos>', 'salut', '.', '<eos>', ...pads(5)]);
    assert.deepEqual(tgtVocab.toTokens(row(got.tgtOutput, 0)), ['salut', '.', '<eos>', ...pads(6)]);
    assert.deepEqual(Array.from(got.srcValidLens), [3]);
    assert.deepEqual(got.unknown, []);
  });

  for (const [name, pairs] of [
    ['English-French', generateFraEng({ seed: 3, size: 600 })],
    ['dates', generateDates({ seed: 3, size: 600 })],
  ]) {
    test(`${name}: valid lengths, <eos>, <bos>, padding and the shift, row by row`, () => {
      for (const numSteps of [4, 11]) {
        const a = buildArrays(pairs, { numSteps });
        assert.deepEqual(a.src.shape, [pairs.length, numSteps]);
        assert.deepEqual(a.tgtInput.shape, [pairs.length, numSteps]);
        assert.deepEqual(a.tgtOutput.shape, [pairs.length, numSteps]);
        pairs.forEach(({ src, tgt }, r) => {
          const srcTokens = src.split(' ');
          const tgtTokens = tgt.split(' ');
          const fit = (tokens) => [...tokens, '<eos>', ...Array(numSteps).fill('<pad>')].slice(0, numSteps);
          const expectSrc = fit(srcTokens).map((t) => (a.srcVocab.has(t) ? t : '<unk>'));
          const expectTgt = fit(tgtTokens).map((t) => (a.tgtVocab.has(t) ? t : '<unk>'));
          assert.deepEqual(a.srcVocab.toTokens(row(a.src, r)), expectSrc, `src row ${r}`);
          assert.deepEqual(a.tgtVocab.toTokens(row(a.tgtOutput, r)), expectTgt, `label row ${r}`);
          assert.deepEqual(a.tgtVocab.toTokens(row(a.tgtInput, r)), ['<bos>', ...expectTgt.slice(0, numSteps - 1)], `input row ${r}`);
          assert.equal(a.srcValidLens[r], Math.min(srcTokens.length + 1, numSteps), `valid length ${r}`);
        });
      }
    });
  }

  test("rows that never need padding still get '<pad>' (reserved) and full valid lengths", () => {
    const pairs = [{ src: 'a b c', tgt: 'x y z' }, { src: 'a b c', tgt: 'x y z' }];
    const got = buildArrays(pairs, { numSteps: 3 });
    assert.deepEqual(got.srcVocab.idxToToken, ['<eos>', '<pad>', '<unk>', 'a', 'b', 'c']);
    assert.deepEqual(got.tgtVocab.idxToToken, ['<bos>', '<eos>', '<pad>', '<unk>', 'x', 'y', 'z']);
    assert.deepEqual(Array.from(got.srcValidLens), [3, 3]);
  });

  test('words seen once are <unk> (minFreq 2) and reported with their place', () => {
    const pairs = [
      { src: 'a b .', tgt: 'x y .' },
      { src: 'a c .', tgt: 'x z .' },
      { src: 'a b .', tgt: 'x y .' },
    ];
    const got = buildArrays(pairs, { numSteps: 5 });
    assert.deepEqual(got.srcVocab.idxToToken, ['.', '<eos>', '<pad>', '<unk>', 'a', 'b']);
    assert.deepEqual(got.unknown, [
      { row: 1, side: 'src', position: 1, token: 'c' },
      { row: 1, side: 'tgt', position: 1, token: 'z' },
    ]);
    assert.equal(row(got.src, 1)[1], got.srcVocab.unk);
    assert.equal(row(got.tgtOutput, 1)[1], got.tgtVocab.unk);
    assert.equal(row(got.tgtInput, 1)[2], got.tgtVocab.unk);
    assert.equal(got.srcValidLens[1], 4, 'an unknown word still counts in the valid length');
  });

  test('encodeSources flags words outside the vocabulary instead of dropping them', () => {
    const { srcVocab } = buildArrays(generateFraEng({ seed: 0, size: 800 }), { numSteps: 10 });
    const got = encodeSources(['he sees the zebra .', 'go .'], srcVocab, 10);
    assert.deepEqual(got.tokens, [['he', 'sees', 'the', 'zebra', '.', '<eos>'], ['go', '.', '<eos>']]);
    assert.deepEqual(got.unknown, [{ row: 0, position: 3, token: 'zebra' }]);
    assert.deepEqual(Array.from(got.srcValidLens), [6, 3]);
    assert.deepEqual(srcVocab.toTokens(row(got.src, 0)), ['he', 'sees', 'the', '<unk>', '.', '<eos>', '<pad>', '<pad>', '<pad>', '<pad>']);
  });

  test('decodeTokens stops at the first <eos>, as d2l reads a prediction', () => {
    const v = Vocab.fromTokens(['!', '<bos>', '<eos>', '<pad>', '<unk>', 'va']);
    assert.deepEqual(decodeTokens(Int32Array.from([5, 0, 2, 5, 0]), v), ['va', '!']);
    assert.deepEqual(decodeTokens([5, 5], v), ['va', 'va']);
    assert.deepEqual(decodeTokens([2, 5], v), []);
  });

  test('a vocabulary survives JSON (Vocab.fromTokens(JSON.parse(JSON.stringify(vocab))))', () => {
    const { tgtVocab } = buildArrays(generateFraEng({ seed: 1, size: 300 }), { numSteps: 10 });
    const back = Vocab.fromTokens(JSON.parse(JSON.stringify(tgtVocab)));
    assert.deepEqual(back.idxToToken, tgtVocab.idxToToken);
    for (const t of ['<bos>', '<eos>', '<pad>', 'voiture', 'nowhere']) assert.equal(back.get(t), tgtVocab.get(t), t);
  });

  test('buildDataset builds the vocabularies from the training pairs only', () => {
    const train = [{ src: 'a .', tgt: 'x .' }, { src: 'a .', tgt: 'x .' }];
    const heldOut = [{ src: 'b .', tgt: 'y .' }, { src: 'b .', tgt: 'y .' }];
    const d = buildDataset({ train, heldOut }, { numSteps: 3 });
    assert.equal(d.srcVocab.has('b'), false);
    assert.equal(d.heldOut.srcVocab, d.srcVocab);
    assert.deepEqual(d.heldOut.unknown.map((u) => u.token), ['b', 'b', 'y', 'y']);
  });

  test('bad arguments throw naming the argument', () => {
    const pairs = [{ src: 'a .', tgt: 'x .' }, { src: 'a .', tgt: 'x .' }];
    assert.throws(() => buildArrays(pairs, { numSteps: 0 }), /numSteps: expected a positive integer, given 0/);
    assert.throws(() => buildArrays([{ src: 'a', tgt: 3 }], { numSteps: 2 }), /pairs\[\]\.tgt\[0\]: expected a string/);
    assert.throws(
      () => buildArrays(pairs, { numSteps: 2, srcVocab: Vocab.fromTokens(['.', '<eos>', '<unk>', 'a']) }),
      /source vocabulary: expected it to contain '<pad>', given 4 tokens without it/,
    );
    assert.throws(() => Vocab.fromTokens(['a']), /idxToToken: expected an array of tokens including '<unk>'/);
    assert.throws(() => new Vocab(['a']).toTokens([5]), /index: expected an integer in \[0, 2\), given 5/);
    assert.throws(() => encodeSources(['a'], {}, 3), /srcVocab: expected a Vocab/);
  });
});

describe('batches', () => {
  const a = buildArrays(generateFraEng({ seed: 2, size: 203 }), { numSteps: 10 });

  test('an epoch visits every row once; the last batch is smaller (d2l keeps it)', () => {
    for (const shuffle of [false, true]) {
      const seen = [];
      const sizes = [];
      for (const b of batches(a, { batchSize: 64, shuffle, seed: 5 })) {
        sizes.push(b.srcValidLens.length);
        assert.deepEqual(b.src.shape, [b.rows.length, 10]);
        b.rows.forEach((r, i) => {
          assert.deepEqual(row(b.src, i), row(a.src, r));
          assert.deepEqual(row(b.tgtInput, i), row(a.tgtInput, r));
          assert.deepEqual(row(b.tgtOutput, i), row(a.tgtOutput, r));
          assert.equal(b.srcValidLens[i], a.srcValidLens[r]);
        });
        seen.push(...b.rows);
      }
      assert.deepEqual(sizes, [64, 64, 64, 11]);
      assert.deepEqual([...seen].sort((x, y) => x - y), Array.from({ length: 203 }, (_, i) => i));
      if (!shuffle) assert.deepEqual(seen, Array.from({ length: 203 }, (_, i) => i));
    }
  });

  test('shuffling is seeded: one seed replays, another differs', () => {
    const order = (seed) => [...batches(a, { batchSize: 50, shuffle: true, seed })].flatMap((b) => Array.from(b.rows));
    assert.deepEqual(order(7), order(7));
    assert.notDeepEqual(order(7), order(8));
  });

  test('bad arguments throw', () => {
    assert.throws(() => batches(a, { batchSize: 0 }).next(), /batchSize: expected a positive integer, given 0/);
    assert.throws(() => takeRows(a, [203]), /rows: expected integers in \[0, 203\), given 203/);
  });
});
