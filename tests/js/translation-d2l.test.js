// The page's translation data pipeline against d2l's own code: tests/fixtures/translation/d2l.json
// holds what d2l's MTFraEng (_preprocess, _tokenize, _build_arrays, build), Vocab and bleu
// return on a hand-written fra.txt-style text and on 200 generated pairs (written by
// scripts/fixtures/translation_data.py, which runs d2l's code).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { importRepo, readRepoJson } from './repo-module.js';

const dir = 'web/shared/translation';
const { preprocess, tokenizePairs } = await importRepo(`${dir}/text.js`);
const { Vocab } = await importRepo(`${dir}/vocab.js`);
const { buildArrays } = await importRepo(`${dir}/arrays.js`);
const { bleu } = await importRepo(`${dir}/bleu.js`);
const fixture = readRepoJson('tests/fixtures/translation/d2l.json');

// A [rows, cols] Int32 tensor as nested arrays, to compare with the fixture's tolist().
const rows = ({ data, shape: [n, width] }) => Array.from({ length: n }, (_, r) => Array.from(data.subarray(r * width, (r + 1) * width)));

// fra.txt text -> pairs of preprocessed sentences, as d2l's _tokenize reads the lines.
const pairsOf = (text) =>
  preprocess(text)
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((parts) => parts.length === 2)
    .map(([src, tgt]) => ({ src, tgt }));

describe("d2l's text pipeline (PyTorch d2l fixtures)", () => {
  test('preprocess matches d2l _preprocess', () => {
    for (const { input, expected } of fixture.preprocess) assert.equal(preprocess(input), expected, JSON.stringify(input));
  });

  test('Vocab matches d2l Vocab: index order, token frequencies, lookups with <unk>', () => {
    for (const { inputs, expected } of fixture.vocab) {
      const v = new Vocab(inputs.tokens, { minFreq: inputs.min_freq, reservedTokens: inputs.reserved_tokens });
      const label = JSON.stringify(inputs);
      assert.deepEqual(v.idxToToken, expected.idx_to_token, label);
      assert.deepEqual(v.tokenFreqs, expected.token_freqs, label);
      assert.deepEqual(v.get(['a', 'b', 'zzz', '<eos>']), expected.lookup, label);
    }
  });

  for (const { name, inputs, expected } of fixture.arrays) {
    test(`tokenizePairs and buildArrays match d2l: ${name}`, () => {
      const text = preprocess(inputs.raw_text);
      assert.equal(text, expected.preprocessed);
      const { src, tgt } = tokenizePairs(text);
      assert.deepEqual(src, expected.src_tokens);
      assert.deepEqual(tgt, expected.tgt_tokens);

      const got = buildArrays(pairsOf(inputs.raw_text), { numSteps: inputs.num_steps });
      assert.deepEqual(got.srcVocab.idxToToken, expected.src_vocab);
      assert.deepEqual(got.tgtVocab.idxToToken, expected.tgt_vocab);
      assert.deepEqual(got.srcVocab.tokenFreqs, expected.src_token_freqs);
      assert.deepEqual(rows(got.src), expected.arrays.src);
      assert.deepEqual(rows(got.tgtInput), expected.arrays.tgt_input);
      assert.deepEqual(Array.from(got.srcValidLens), expected.arrays.src_valid_len);
      assert.deepEqual(rows(got.tgtOutput), expected.arrays.label);

      // d2l's build(): new sentences through the same vocabularies (unknown words -> <unk>).
      const { build } = inputs;
      const built = buildArrays(
        build.src.map((s, i) => ({ src: s, tgt: build.tgt[i] })),
        { numSteps: inputs.num_steps, srcVocab: got.srcVocab, tgtVocab: got.tgtVocab },
      );
      assert.deepEqual(rows(built.src), expected.build.src);
      assert.deepEqual(rows(built.tgtInput), expected.build.tgt_input);
      assert.deepEqual(Array.from(built.srcValidLens), expected.build.src_valid_len);
      assert.deepEqual(rows(built.tgtOutput), expected.build.label);
    });
  }

  test('tokenizePairs keeps d2l\'s max_examples bound (lines 0 … maxExamples)', () => {
    const text = ['a\tb', 'c\td', 'e\tf', 'g\th'].join('\n');
    assert.deepEqual(tokenizePairs(text, { maxExamples: 2 }).src, [['a', '<eos>'], ['c', '<eos>'], ['e', '<eos>']]);
  });

  test('bleu matches d2l bleu for k = 1 … 4', () => {
    for (const { pred, label, k, expected } of fixture.bleu) {
      const got = bleu(pred, label, k);
      assert.ok(Math.abs(got - expected) <= 1e-12, `bleu(${JSON.stringify(pred)}, ${JSON.stringify(label)}, ${k}) = ${got}, d2l ${expected}`);
    }
  });
});
