// The heads the page's section 6 draws for a Transformer (Trainer.translateText with
// { heads: true }): every block's encoder self-attention and decoder cross-attention on each
// sentence, cut to its tokens. Checked against a reference computed here in double from the
// model's state dict (d2l's encoder: embedding × √d plus sinusoidal positions, then per head
// softmax(q kᵀ / √d_head) over the source's valid keys), and by properties: rows are
// distributions, the mean over the last block's heads is the alignment the page draws, and a
// sentence's maps do not depend on the others in its batch.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { backends } from './backends.js';
import { assertClose, assertRowsSumToOne, positionalEncoding, softmaxRow } from '../../harness/reference.js';
import { importRepo } from './repo-module.js';

const dir = 'web/shared/translation';
const { prepareTask, taskSpec } = await importRepo(`${dir}/tasks.js`);
const { Trainer } = await importRepo(`${dir}/trainer.js`);

const attn = backends[0];
const data = prepareTask('fra-eng');
const { prepare } = taskSpec('fra-eng');
const SENTENCES = ['she likes the black cats .', "i'm home .", 'the women take a red boat .'];
const MODEL = { numHiddens: 16, ffnNumHiddens: 24, numHeads: 4, numBlks: 2, dropout: 0 };

// Block 1's encoder heads on one source (token ids), in double: [heads][n × n].
function firstEncoderBlock(dict, ids, { numHiddens: d, numHeads }) {
  const n = ids.length;
  const dh = d / numHeads;
  const emb = dict['encoder.embedding.weight'].data;
  const P = positionalEncoding(n, d).data;
  const X = ids.map((id, t) => Array.from({ length: d }, (_, c) => emb[id * d + c] * Math.sqrt(d) + P[t * d + c]));
  const project = (W) => X.map((x) => Array.from({ length: d }, (_, o) => x.reduce((sum, xc, c) => sum + W[o * d + c] * xc, 0)));
  const Q = project(dict['encoder.blks.block0.attention.W_q.weight'].data);
  const K = project(dict['encoder.blks.block0.attention.W_k.weight'].data);
  return Array.from({ length: numHeads }, (_, h) => Float64Array.from(Q.flatMap((q) => Array.from(softmaxRow(K.map((k) => {
    let dot = 0;
    for (let c = h * dh; c < (h + 1) * dh; c++) dot += q[c] * k[c];
    return dot / Math.sqrt(dh);
  }))))));
}

describe('a Transformer\'s heads as section 6 draws them', () => {
  const trainer = new Trainer(attn, data, { kind: 'transformer', seed: 5, model: MODEL });
  // A few steps, so that the maps are not those of random weights alone.
  for (let i = 0; i < 20; i++) trainer.trainStep();
  const results = trainer.translateText(SENTENCES, prepare, { heads: true });
  after(() => trainer.dispose());

  test('every block and head, cut to the sentence: rows over the source sum to 1', () => {
    for (const { source, output, heads } of results) {
      for (const [key, rows] of [['encoder', source.length], ['cross', output.length]]) {
        assert.equal(heads[key].length, MODEL.numBlks, `${key}: blocks`);
        for (const block of heads[key]) {
          assert.equal(block.length, MODEL.numHeads, `${key}: heads`);
          for (const map of block) assertRowsSumToOne({ data: map, shape: [rows, source.length] }, 1e-5, key);
        }
      }
    }
  });

  test('the encoder\'s first block matches a double-precision reference from the state dict', () => {
    const dict = trainer.model.stateDict();
    for (const { source, heads } of results) {
      const ids = source.map((token) => data.srcVocab.get(token));
      const want = firstEncoderBlock(dict, ids, MODEL);
      heads.encoder[0].forEach((map, h) => assertClose(map, want[h], { atol: 1e-5, rtol: 1e-4, label: `${source.join(' ')}: head ${h + 1}` }));
    }
  });

  test('the alignment drawn is the mean of the last block\'s cross-attention heads', () => {
    for (const { attention, heads } of results) {
      const last = heads.cross.at(-1);
      const mean = attention.map((_, k) => last.reduce((sum, map) => sum + map[k], 0) / last.length);
      assertClose(attention, mean, { label: 'alignment' });
    }
  });

  test('a sentence\'s heads do not depend on the batch it is translated in', () => {
    const [alone] = trainer.translateText([SENTENCES[1]], prepare, { heads: true });
    assert.deepEqual(alone.output, results[1].output);
    for (const key of ['encoder', 'cross']) {
      alone.heads[key].forEach((block, b) => block.forEach((map, h) => assertClose(map, results[1].heads[key][b][h], { label: `${key} ${b} ${h}` })));
    }
  });

  test('heads only when asked for, and only for a model that has them', () => {
    assert.equal(trainer.translateText(SENTENCES, prepare)[0].heads, null);
    const bahdanau = new Trainer(attn, data, { kind: 'bahdanau' });
    try {
      assert.equal(bahdanau.translateText(SENTENCES, prepare, { heads: true })[0].heads, null);
    } finally {
      bahdanau.dispose();
    }
  });
});
