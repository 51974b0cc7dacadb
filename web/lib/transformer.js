// Transformer: d2l 11.7's encoder-decoder built from multi-head attention, trained and run in
// wasm with the same shape of API as Seq2SeqAttention (encoder-decoder.js: loss, gradients, the
// clipped Adam step; model.js: the state dict under d2l's names, dispose()). Here: the
// configuration, the teacher-forced forward with every attention map, and greedy translation,
// which keeps each decoder block's keys and values in a KV cache.

import { readFloat32, readOptions, readPositiveInteger, readSize } from './arguments.js';
import { check, output } from './heap.js';
import { initialisedHandle } from './handle.js';
import { HANDLE, createEncoderDecoderBase } from './encoder-decoder.js';

// The core's argument names, as this API spells them.
const NAMES = {
  src_vocab_size: 'srcVocabSize', tgt_vocab_size: 'tgtVocabSize', num_hiddens: 'numHiddens',
  ffn_num_hiddens: 'ffnNumHiddens', num_heads: 'numHeads', num_blks: 'numBlks',
  src_valid_lens: 'srcValidLens', tgt_input: 'tgtInput', tgt_output: 'tgtOutput', max_len: 'maxLen',
  state_dict: 'dict',
};

// One output buffer for several per-block maps back to back (the binding writes them so), and
// its split into one tensor per block.
const blockShapes = (count, shape) => Array.from({ length: count }, () => shape);
const size = (shape) => shape.reduce((a, b) => a * b, 1);
function splitBlocks(data, shapes) {
  let offset = 0;
  return shapes.map((shape) => {
    const tensor = { data: data.slice(offset, offset + size(shape)), shape: [...shape] };
    offset += size(shape);
    return tensor;
  });
}

export function createTransformerClass(module) {
  return class Transformer extends createEncoderDecoderBase(module, NAMES) {
    constructor(config) {
      const c = readOptions('config', config, [
        'srcVocabSize', 'tgtVocabSize', 'numHiddens', 'ffnNumHiddens', 'numHeads', 'numBlks', 'dropout', 'seed',
      ], { required: true });
      const fields = {
        srcVocabSize: readPositiveInteger('srcVocabSize', c.srcVocabSize),
        tgtVocabSize: readPositiveInteger('tgtVocabSize', c.tgtVocabSize),
        numHiddens: readPositiveInteger('numHiddens', c.numHiddens),
        ffnNumHiddens: readPositiveInteger('ffnNumHiddens', c.ffnNumHiddens),
        numHeads: readPositiveInteger('numHeads', c.numHeads),
        numBlks: readPositiveInteger('numBlks', c.numBlks),
        dropout: readFloat32('dropout', c.dropout, 0),
        seed: readSize('seed', c.seed ?? 0, Number.MAX_SAFE_INTEGER),
      };
      if (fields.numHiddens % fields.numHeads !== 0) {
        throw new RangeError(`numHeads: expected a divisor of numHiddens ${fields.numHiddens}, got ${fields.numHeads}`);
      }
      const handle = initialisedHandle(module.Transformer, (h) => h.init(fields), (status) => check(status, NAMES));
      super(handle, 'Transformer');
      this.config = Object.freeze(fields);
    }

    /**
     * Teacher-forced forward (causal, no dropout): src [B, Ts], srcValidLens [B], tgtInput
     * [B, Tt] -> { logits [B, Tt, tgtVocabSize], attention: { encoder, decoderSelf,
     * decoderCross } }, each an array over blocks of [B, numHeads, Tq, Tk] weights before dropout.
     */
    forward(src, srcValidLens, tgtInput) {
      this[HANDLE]();
      const batch = this.readBatch(src, srcValidLens, { tgtInput });
      const [B, Ts] = batch.src.shape;
      const Tt = batch.targets[0].shape[1];
      const { numHeads: h, numBlks: L, tgtVocabSize } = this.config;
      const shapes = {
        encoder: blockShapes(L, [B, h, Ts, Ts]),
        decoderSelf: blockShapes(L, [B, h, Tt, Tt]),
        decoderCross: blockShapes(L, [B, h, Tt, Ts]),
      };
      const logits = output('logits', [B, Tt, tgtVocabSize]);
      const maps = output('attention', [Object.values(shapes).flat().reduce((sum, s) => sum + size(s), 0)]);
      return this.call(batch, [logits, maps], (handle, scope, a) => {
        const [logitsPointer, mapsPointer] = a.pointers;
        check(handle.forward(a.src, a.lens, a.targets[0], logitsPointer, mapsPointer), NAMES);
        const all = splitBlocks(scope.take(mapsPointer, maps).data, Object.values(shapes).flat());
        return {
          logits: scope.take(logitsPointer, logits),
          attention: { encoder: all.slice(0, L), decoderSelf: all.slice(L, 2 * L), decoderCross: all.slice(2 * L) },
        };
      });
    }

    /**
     * Greedy decoding of the whole batch with a KV cache per decoder block: from `bos`, each step
     * feeds back the most likely token, for maxLen steps. -> { tokens: Int32 [B, maxLen] (eos
     * repeated after a row's first eos), lengths: Int32Array [B] (tokens up to and including the
     * first eos), attention: { decoderCross } (an array over blocks of [B, numHeads, maxLen, Ts];
     * rows after eos are 0) }.
     */
    translate(src, srcValidLens, options) {
      this[HANDLE]();
      const t = this.readTranslation(src, srcValidLens, options);
      const [B, Ts] = t.batch.src.shape;
      const shapes = blockShapes(this.config.numBlks, [B, this.config.numHeads, t.maxLen, Ts]);
      const cross = output('attention', [shapes.reduce((sum, s) => sum + size(s), 0)]);
      return this.call(t.batch, [t.tokens, t.lengths, cross], (handle, scope, a) => {
        const [tokensPointer, lengthsPointer, crossPointer] = a.pointers;
        check(handle.translate(a.src, a.lens, t.bos, t.eos, t.maxLen, tokensPointer, lengthsPointer, crossPointer), NAMES);
        return {
          tokens: scope.take(tokensPointer, t.tokens),
          lengths: scope.take(lengthsPointer, t.lengths).data,
          attention: { decoderCross: splitBlocks(scope.take(crossPointer, cross).data, shapes) },
        };
      });
    }
  };
}
