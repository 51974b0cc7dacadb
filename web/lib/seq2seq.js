// Seq2SeqAttention: d2l's GRU encoder-decoder with Bahdanau attention (d2l 11.4), trained and
// run in wasm: forward (teacher forcing), loss and gradients, one clipped Adam step, greedy
// translation, and (from model.js) the state dict under d2l's module paths and dispose().
// Token tensors are { data: Int32Array, shape: [B, T] }; srcValidLens an Int32Array [B] (or a
// tensor of shape [B]). Token ids and lengths are checked by the core.

import { readBoolean, readFloat32, readOptions, readPositiveInteger, readSize, readTensor } from './arguments.js';
import { check, output, withHeap } from './heap.js';
import { initialisedHandle } from './handle.js';
import { HANDLE, createModelBase } from './model.js';

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

const readTokens = (name, value) => readTensor(name, value, { types: ['Int32Array'], expected: [-1, -1] });
const tokenArg = (pointer, record) => ({ data: pointer, batch: record.shape[0], steps: record.shape[1] });

export function createSeq2SeqClass(module) {
  return class Seq2SeqAttention extends createModelBase(module) {
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

    // src, srcValidLens and the target tensors of one call, read once.
    #readBatch(src, srcValidLens, targets) {
      const s = readTokens('src', src);
      const lens = readTensor('srcValidLens', srcValidLens, { types: ['Int32Array'], bare: true, expected: [-1] });
      return { src: s, lens, targets: Object.entries(targets).map(([name, value]) => readTokens(name, value)) };
    }

    // Runs one core call with the batch's records in the heap: body(handle, scope, args) gets
    // the src TokenArg, the lengths' address and the targets' TokenArgs.
    #call(batch, outputs, body) {
      const handle = this[HANDLE]();
      return withHeap(module, [batch.src, batch.lens, ...batch.targets, ...outputs], (scope) => {
        const pointers = outputs.map((out) => scope.alloc(out));
        const src = tokenArg(scope.put(batch.src), batch.src);
        const lens = scope.put(batch.lens);
        const targets = batch.targets.map((record) => tokenArg(scope.put(record), record));
        return body(handle, scope, { src, lens, targets, pointers });
      });
    }

    /**
     * Teacher-forced forward: src [B, Ts], srcValidLens [B], tgtInput [B, Tt] ->
     * { logits [B, Tt, tgtVocabSize], attention [B, Tt, Ts] (null without attention) }.
     */
    forward(src, srcValidLens, tgtInput) {
      this[HANDLE]();
      const batch = this.#readBatch(src, srcValidLens, { tgtInput });
      const [B, Ts] = batch.src.shape;
      const Tt = batch.targets[0].shape[1];
      const logits = output('logits', [B, Tt, this.config.tgtVocabSize]);
      const attention = this.config.attention ? output('attention', [B, Tt, Ts]) : null;
      return this.#call(batch, [logits, attention].filter(Boolean), (handle, scope, a) => {
        const [logitsPointer, attentionPointer = 0] = a.pointers;
        check(handle.forward(a.src, a.lens, a.targets[0], logitsPointer, attentionPointer), NAMES);
        return { logits: scope.take(logitsPointer, logits), attention: attention && scope.take(attentionPointer, attention) };
      });
    }

    /**
     * The cross-entropy over the labels tgtOutput [B, Tt] other than `pad` (d2l's Seq2Seq.loss)
     * and its gradient for every parameter: { loss, gradients: { name: tensor } }. Dropout (if
     * configured) is on, as in training.
     */
    lossAndGradients(src, srcValidLens, tgtInput, tgtOutput, options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['pad'], { required: true });
      const batch = this.#readBatch(src, srcValidLens, { tgtInput, tgtOutput });
      const pad = readSize('pad', o.pad);
      const loss = output('loss', [1]);
      const gradients = this.flatParameters('gradients');
      return this.#call(batch, [loss, gradients], (handle, scope, a) => {
        const [lossPointer, gradientsPointer] = a.pointers;
        check(handle.lossAndGradients(a.src, a.lens, ...a.targets, pad, lossPointer, gradientsPointer), NAMES);
        return {
          loss: scope.take(lossPointer, loss).data[0],
          gradients: this.splitParameters(scope.take(gradientsPointer, gradients).data),
        };
      });
    }

    /**
     * One training step: the gradients as lossAndGradients gives them, their global norm clipped
     * to `clip` (0: no clipping) as torch.nn.utils.clip_grad_norm_ does, then one Adam step with
     * PyTorch's defaults and learning rate `lr` (state kept across steps). Returns the loss
     * before the step.
     */
    trainStep(src, srcValidLens, tgtInput, tgtOutput, options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['pad', 'lr', 'clip'], { required: true });
      const batch = this.#readBatch(src, srcValidLens, { tgtInput, tgtOutput });
      const pad = readSize('pad', o.pad);
      const lr = readFloat32('lr', o.lr, 1e-3);
      const clip = readFloat32('clip', o.clip, 0);
      const loss = output('loss', [1]);
      return this.#call(batch, [loss], (handle, scope, a) => {
        check(handle.trainStep(a.src, a.lens, ...a.targets, pad, lr, clip, a.pointers[0]), NAMES);
        return scope.take(a.pointers[0], loss).data[0];
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
      const o = readOptions('options', options, ['bos', 'eos', 'maxLen'], { required: true });
      const batch = this.#readBatch(src, srcValidLens, {});
      const bos = readSize('bos', o.bos);
      const eos = readSize('eos', o.eos);
      const maxLen = readPositiveInteger('maxLen', o.maxLen);
      const [B, Ts] = batch.src.shape;
      const tokens = output('tokens', [B, maxLen], 'Int32Array');
      const lengths = output('lengths', [B], 'Int32Array');
      const attention = this.config.attention ? output('attention', [B, maxLen, Ts]) : null;
      return this.#call(batch, [tokens, lengths, attention].filter(Boolean), (handle, scope, a) => {
        const [tokensPointer, lengthsPointer, attentionPointer = 0] = a.pointers;
        check(handle.translate(a.src, a.lens, bos, eos, maxLen, tokensPointer, lengthsPointer, attentionPointer), NAMES);
        return {
          tokens: scope.take(tokensPointer, tokens),
          lengths: scope.take(lengthsPointer, lengths).data,
          attention: attention && scope.take(attentionPointer, attention),
        };
      });
    }
  };
}
