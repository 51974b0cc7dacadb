// MultiHeadAttention: torch.nn.MultiheadAttention(batch_first=True) in wasm: forward, backward,
// incremental self-attention through a KV cache (createCache, forward with { cache }), and
// (from model.js) the state dict and dispose().

import {
  describe, readBatch, readBoolean, readOptions, readPositiveInteger, readSize, readTensor,
} from './arguments.js';
import { check, output, withHeap } from './heap.js';
import { MASK_OPTIONS, PYTORCH_FILL, maskArg, readMask } from './mask.js';
import { initialisedHandle } from './handle.js';
import { HANDLE, createModelBase } from './model.js';
import { tensorArg } from './tensor.js';

const BACKWARD_OPTIONS = [...MASK_OPTIONS.filter((name) => name !== 'mask'), 'attnMask'];
const FORWARD_OPTIONS = [...BACKWARD_OPTIONS, 'needWeights', 'averageAttnWeights'];
// With a cache, the only other options allowed are the ones that say what it does anyway.
const CACHE_IMPLIES = { causal: true, needWeights: false };

// KVCache and readCache: createKVCacheClass(module) (kv-cache.js), for createCache and the
// cache option of forward.
export function createMultiHeadAttentionClass(module, { KVCache, readCache }) {
  // The four projection matrices: E x E (query, output), E x kdim, E x vdim, as one output()
  // so the heap limit is checked before the core allocates them.
  const checkWeightsFit = (e, kdim, vdim) => withHeap(module, [output('embedDim', [e, 2 * e + kdim + vdim])], () => {});

  return class MultiHeadAttention extends createModelBase(module) {
    constructor(config) {
      const c = readOptions('config', config, ['embedDim', 'numHeads', 'kdim', 'vdim', 'bias'], { required: true });
      const embedDim = readPositiveInteger('embedDim', c.embedDim);
      const numHeads = readPositiveInteger('numHeads', c.numHeads);
      if (embedDim % numHeads !== 0) {
        throw new RangeError(`numHeads: expected a divisor of embedDim ${embedDim}, got ${numHeads}`);
      }
      const kdim = readPositiveInteger('kdim', c.kdim === undefined ? embedDim : c.kdim);
      const vdim = readPositiveInteger('vdim', c.vdim === undefined ? embedDim : c.vdim);
      const bias = readBoolean('bias', c.bias, true);
      checkWeightsFit(embedDim, kdim, vdim);
      const handle = initialisedHandle(module.MultiHeadAttention, (h) => h.init(embedDim, numHeads, kdim, vdim, bias), (status) => {
        throw new RangeError(`embedDim: could not create attention with embedDim ${embedDim}, kdim ${kdim}, vdim ${vdim}: ${status.message}`);
      });
      super(handle, 'MultiHeadAttention');
      this.config = Object.freeze({ embedDim, numHeads, kdim, vdim, bias });
    }

    // Re-draws the parameters as PyTorch initialises them, from a seed.
    resetParameters(seed = 0) {
      readSize('seed', seed, Number.MAX_SAFE_INTEGER);
      check(this[HANDLE]().resetParameters(seed));
      return this;
    }

    /**
     * An empty KVCache for incremental self-attention through this layer: numHeads heads of
     * width embedDim / numHeads, room for `capacity` positions before it grows (default 0).
     */
    createCache(options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['batch', 'capacity'], { required: true });
      const { embedDim, numHeads } = this.config;
      return new KVCache({ batch: o.batch, heads: numHeads, headDim: embedDim / numHeads, capacity: o.capacity });
    }

    // The three inputs, one record for a tensor passed twice. The widths and the batch and rows
    // shared by query, key and value are the core's to check.
    static #readInputs(query, key, value) {
      const q = readBatch('query', query);
      const k = key === query ? q : readBatch('key', key);
      const v = value === key ? k : value === query ? q : readBatch('value', value);
      return { q, k, v, inputs: [...new Set([q, k, v])] };
    }

    // What forward and backward both read: the three inputs and the options (read) with the mask.
    #readCall(query, key, value, o) {
      const { numHeads } = this.config;
      const { q, k, v, inputs } = MultiHeadAttention.#readInputs(query, key, value);
      const [batch, nq] = q.shape;
      const nk = k.shape[1];
      const mask = readMask({ ...o, mask: o.attnMask }, {
        batch, nq, nk, heads: numHeads, names: { mask: 'attnMask' }, defaultFill: PYTORCH_FILL,
      });
      return { o, q, k, v, batch, nq, nk, mask, inputs };
    }

    // The three inputs as TensorArgs, each distinct record copied into the heap once.
    static #inputArgs(scope, call) {
      const pointers = new Map(call.inputs.map((r) => [r, scope.put(r)]));
      return [call.q, call.k, call.v].map((r) => tensorArg(pointers.get(r), r.shape));
    }

    forward(query, key = query, value = key, options = {}) {
      this[HANDLE]();
      const o = readOptions('options', options, [...FORWARD_OPTIONS, 'cache']);
      if (o.cache !== undefined) return this.#forwardCached(query, key, value, o);
      const call = this.#readCall(query, key, value, o);
      const { embedDim, numHeads } = this.config;
      const { batch, nq, nk } = call;
      const needWeights = readBoolean('needWeights', call.o.needWeights, true);
      const averageAttnWeights = readBoolean('averageAttnWeights', call.o.averageAttnWeights, true);
      const out = output('output', [batch, nq, embedDim]);
      const weights = needWeights ? output('weights', averageAttnWeights ? [batch, nq, nk] : [batch, numHeads, nq, nk]) : null;
      const handle = this[HANDLE]();
      return withHeap(module, [...call.inputs, ...call.mask.buffers, out, weights].filter(Boolean), (scope) => {
        const outPointer = scope.alloc(out);
        const weightsPointer = weights ? scope.alloc(weights) : 0;
        const [qa, ka, va] = MultiHeadAttention.#inputArgs(scope, call);
        const weightRows = averageAttnWeights ? batch : batch * numHeads;
        check(handle.forward(qa, ka, va, maskArg(scope, call.mask), averageAttnWeights, tensorArg(outPointer, out.shape),
          tensorArg(weightsPointer, [weightRows, nq, nk])));
        const result = { output: scope.take(outPointer, out) };
        if (weights) result.weights = scope.take(weightsPointer, weights);
        return result;
      });
    }

    // Incremental self-attention: query, key and value hold the t new positions ([B, t, E],
    // [B, t, kdim], [B, t, vdim]); their projected keys and values are appended to the cache
    // in the core, so only the new positions cross the boundary.
    #forwardCached(query, key, value, o) {
      const cache = readCache('cache', o.cache);
      for (const name of FORWARD_OPTIONS) {
        if (o[name] !== undefined && o[name] !== CACHE_IMPLIES[name]) {
          throw new RangeError(`${name}: not supported with a cache (decoding through it is causal and returns no weights), got ${describe(o[name])}`);
        }
      }
      const call = MultiHeadAttention.#readInputs(query, key, value);
      const [batch, t] = call.q.shape;
      const out = output('output', [batch, t, this.config.embedDim]);
      const cacheHandle = cache[HANDLE]();
      const handle = this[HANDLE]();
      return withHeap(module, [...call.inputs, out], (scope) => {
        const outPointer = scope.alloc(out);
        const [qa, ka, va] = MultiHeadAttention.#inputArgs(scope, call);
        check(handle.forwardCached(qa, ka, va, cacheHandle, tensorArg(outPointer, out.shape)));
        return { output: scope.take(outPointer, out) };
      });
    }

    // Gradients of sum(output * gradOutput) for forward(query, key, value, options): dQuery,
    // dKey, dValue shaped like the inputs, and dParameters under the state-dict names. For
    // self-attention (one tensor passed three times) its gradient is dQuery + dKey + dValue.
    backward(query, key, value, gradOutput, options = {}) {
      this[HANDLE]();
      const call = this.#readCall(query, key, value, readOptions('options', options, BACKWARD_OPTIONS));
      const { embedDim } = this.config;
      const grad = readTensor('gradOutput', gradOutput, { expected: [call.batch, call.nq, embedDim] });
      const outputs = [['dQuery', call.q], ['dKey', call.k], ['dValue', call.v]].map(([name, like]) => output(name, like.shape));
      const flat = this.flatParameters('dParameters');
      const handle = this[HANDLE]();
      return withHeap(module, [...call.inputs, grad, ...call.mask.buffers, ...outputs, flat], (scope) => {
        const pointers = outputs.map((out) => scope.alloc(out));
        const flatPointer = scope.alloc(flat);
        const [qa, ka, va] = MultiHeadAttention.#inputArgs(scope, call);
        check(handle.backward(qa, ka, va, tensorArg(scope.put(grad), grad.shape), maskArg(scope, call.mask),
          ...outputs.map((out, i) => tensorArg(pointers[i], out.shape)), flatPointer));
        const result = Object.fromEntries(outputs.map((out, i) => [out.name, scope.take(pointers[i], out)]));
        result.dParameters = this.splitParameters(scope.take(flatPointer, flat).data);
        return result;
      });
    }
  };
}
