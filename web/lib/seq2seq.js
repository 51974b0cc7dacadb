// Seq2SeqAttention: d2l's GRU encoder-decoder with Bahdanau attention (d2l 11.4), trained and
// run in wasm: forward (teacher forcing) and greedy translation here; the loss, its gradients
// and the clipped Adam step from encoder-decoder.js; the state dict under d2l's module paths and
// dispose() from model.js.

import { readBoolean, readFloat32, readOptions, readPositiveInteger, readSize } from './arguments.js';
import { check, output } from './heap.js';
import { initialisedHandle } from './handle.js';
import { HANDLE, createEncoderDecoderBase } from './encoder-decoder.js';

// The core's argument names, as this API spells them.
const NAMES = {
  src_vocab_size: 'srcVocabSize', tgt_vocab_size: 'tgtVocabSize', embed_size: 'embedSize',
  num_hiddens: 'numHiddens', num_layers: 'numLayers', src_valid_lens: 'srcValidLens',
  tgt_input: 'tgtInput', tgt_output: 'tgtOutput', max_len: 'maxLen', state_dict: 'dict',
};

// d2l's Seq2SeqEncoder and plain Seq2SeqDecoder wrap nn.GRU in d2l.GRU, so PyTorch names their
// weights 'encoder.rnn.rnn.weight_ih_l0' where the module path (and our name) is
// 'encoder.rnn.weight_ih_l0'. A view of `dict` under our names; its getters read the caller's
// entries, so each entry is still read once, by the base class.
function canonicalNames(dict) {
  if (dict === null || typeof dict !== 'object') return dict;
  const view = Object.create(null);
  const given = Object.create(null);
  for (const key of Object.keys(dict)) {
    const name = key.replace(/^(encoder|decoder)\.rnn\.rnn\./, '$1.rnn.');
    if (name in view) throw new RangeError(`dict: '${name}' given twice, as '${given[name]}' and '${key}'`);
    given[name] = key;
    Object.defineProperty(view, name, { enumerable: true, get: () => dict[key] });
  }
  return view;
}

export function createSeq2SeqClass(module) {
  return class Seq2SeqAttention extends createEncoderDecoderBase(module, NAMES) {
    constructor(config) {
      const c = readOptions('config', config, [
        'srcVocabSize', 'tgtVocabSize', 'embedSize', 'numHiddens', 'numLayers', 'dropout', 'seed', 'attention',
      ], { required: true });
      const fields = {
        srcVocabSize: readPositiveInteger('srcVocabSize', c.srcVocabSize),
        tgtVocabSize: readPositiveInteger('tgtVocabSize', c.tgtVocabSize),
        embedSize: readPositiveInteger('embedSize', c.embedSize),
        numHiddens: readPositiveInteger('numHiddens', c.numHiddens),
        numLayers: readPositiveInteger('numLayers', c.numLayers ?? 1),
        dropout: readFloat32('dropout', c.dropout, 0),
        seed: readSize('seed', c.seed ?? 0, Number.MAX_SAFE_INTEGER),
        attention: readBoolean('attention', c.attention, true),
      };
      const handle = initialisedHandle(module.Seq2Seq, (h) => h.init(fields), (status) => check(status, NAMES));
      super(handle, 'Seq2SeqAttention');
      this.config = Object.freeze(fields);
    }

    /** Loads a state dict under d2l's names; 'encoder.rnn.rnn.*' (d2l.GRU's spelling) too. */
    loadStateDict(dict) {
      this[HANDLE]();
      return super.loadStateDict(canonicalNames(dict));
    }

    /**
     * Teacher-forced forward: src [B, Ts], srcValidLens [B], tgtInput [B, Tt] ->
     * { logits [B, Tt, tgtVocabSize], attention [B, Tt, Ts] (null without attention) }.
     */
    forward(src, srcValidLens, tgtInput) {
      this[HANDLE]();
      const batch = this.readBatch(src, srcValidLens, { tgtInput });
      const [B, Ts] = batch.src.shape;
      const Tt = batch.targets[0].shape[1];
      const logits = output('logits', [B, Tt, this.config.tgtVocabSize]);
      const attention = this.config.attention ? output('attention', [B, Tt, Ts]) : null;
      return this.call(batch, [logits, attention].filter(Boolean), (handle, scope, a) => {
        const [logitsPointer, attentionPointer = 0] = a.pointers;
        check(handle.forward(a.src, a.lens, a.targets[0], logitsPointer, attentionPointer), NAMES);
        return { logits: scope.take(logitsPointer, logits), attention: attention && scope.take(attentionPointer, attention) };
      });
    }

    /**
     * Greedy decoding of the whole batch, as d2l's predict_step: from `bos`, each step feeds back
     * the most likely token, for maxLen steps. -> { tokens: Int32 [B, maxLen] (eos repeated after
     * a row's first eos), lengths: Int32Array [B] (tokens up to and including the first eos),
     * attention [B, maxLen, Ts] (null without attention) }.
     */
    translate(src, srcValidLens, options) {
      this[HANDLE]();
      const t = this.readTranslation(src, srcValidLens, options);
      const [B, Ts] = t.batch.src.shape;
      const attention = this.config.attention ? output('attention', [B, t.maxLen, Ts]) : null;
      return this.call(t.batch, [t.tokens, t.lengths, attention].filter(Boolean), (handle, scope, a) => {
        const [tokensPointer, lengthsPointer, attentionPointer = 0] = a.pointers;
        check(handle.translate(a.src, a.lens, t.bos, t.eos, t.maxLen, tokensPointer, lengthsPointer, attentionPointer), NAMES);
        return {
          tokens: scope.take(tokensPointer, t.tokens),
          lengths: scope.take(lengthsPointer, t.lengths).data,
          attention: attention && scope.take(attentionPointer, attention),
        };
      });
    }
  };
}
