// What the encoder-decoder models of the API share (Seq2SeqAttention, Transformer), so that code
// moves from one to the other: reading a batch of token tensors, running a core call with them
// in the wasm heap, the loss with every parameter's gradient, the clipped Adam step, and the
// options of greedy translation. Token tensors are { data: Int32Array, shape: [B, T] };
// srcValidLens an Int32Array [B] (or a tensor of shape [B]). Token ids and lengths are checked
// by the core.

import { readFloat32, readOptions, readPositiveInteger, readSize, readTensor } from './arguments.js';
import { check, output, withHeap } from './heap.js';
import { HANDLE, createModelBase } from './model.js';

export { HANDLE };

const readTokens = (name, value) => readTensor(name, value, { types: ['Int32Array'], expected: [-1, -1] });
const tokenArg = (pointer, record) => ({ data: pointer, batch: record.shape[0], steps: record.shape[1] });

// names: the core's argument names as the model's API spells them, for error messages.
export function createEncoderDecoderBase(module, names) {
  return class EncoderDecoder extends createModelBase(module) {
    // src, srcValidLens and the target tensors of one call, read once.
    readBatch(src, srcValidLens, targets) {
      const s = readTokens('src', src);
      const lens = readTensor('srcValidLens', srcValidLens, { types: ['Int32Array'], bare: true, expected: [-1] });
      return { src: s, lens, targets: Object.entries(targets).map(([name, value]) => readTokens(name, value)) };
    }

    // Runs one core call with the batch's records in the heap: body(handle, scope, args) gets
    // the src TokenArg, the lengths' address, the targets' TokenArgs and the outputs' addresses.
    call(batch, outputs, body) {
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
     * The cross-entropy over the labels tgtOutput [B, Tt] other than `pad` (d2l's Seq2Seq.loss)
     * and its gradient for every parameter: { loss, gradients: { name: tensor } }. Dropout (if
     * configured) is on, as in training.
     */
    lossAndGradients(src, srcValidLens, tgtInput, tgtOutput, options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['pad'], { required: true });
      const batch = this.readBatch(src, srcValidLens, { tgtInput, tgtOutput });
      const pad = readSize('pad', o.pad);
      const loss = output('loss', [1]);
      const gradients = this.flatParameters('gradients');
      return this.call(batch, [loss, gradients], (handle, scope, a) => {
        const [lossPointer, gradientsPointer] = a.pointers;
        check(handle.lossAndGradients(a.src, a.lens, ...a.targets, pad, lossPointer, gradientsPointer), names);
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
      const batch = this.readBatch(src, srcValidLens, { tgtInput, tgtOutput });
      const pad = readSize('pad', o.pad);
      const lr = readFloat32('lr', o.lr, 1e-3);
      const clip = readFloat32('clip', o.clip, 0);
      const loss = output('loss', [1]);
      return this.call(batch, [loss], (handle, scope, a) => {
        check(handle.trainStep(a.src, a.lens, ...a.targets, pad, lr, clip, a.pointers[0]), names);
        return scope.take(a.pointers[0], loss).data[0];
      });
    }

    // translate()'s options and batch: { batch, bos, eos, maxLen, tokens, lengths } with the
    // token outputs [B, maxLen] and [B] allocated.
    readTranslation(src, srcValidLens, options) {
      const o = readOptions('options', options, ['bos', 'eos', 'maxLen'], { required: true });
      const batch = this.readBatch(src, srcValidLens, {});
      const bos = readSize('bos', o.bos);
      const eos = readSize('eos', o.eos);
      const maxLen = readPositiveInteger('maxLen', o.maxLen);
      const B = batch.src.shape[0];
      return {
        batch, bos, eos, maxLen,
        tokens: output('tokens', [B, maxLen], 'Int32Array'),
        lengths: output('lengths', [B], 'Int32Array'),
      };
    }
  };
}
