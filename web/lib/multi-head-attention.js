// MultiHeadAttention: torch.nn.MultiheadAttention(batch_first=True) in wasm. Each instance owns
// a C++ object; dispose() frees it (a FinalizationRegistry frees forgotten ones eventually).
// Every method reads all its arguments before it looks at the handle, so a getter that calls
// dispose() is caught as use after dispose, before anything reaches the heap.

import {
  describe, readBatch, readBoolean, readOptions, readPositiveInteger, readSize, readTensor, shapeString,
} from './arguments.js';
import { check, output, withHeap } from './heap.js';
import { MASK_OPTIONS, PYTORCH_FILL, maskArg, readMask } from './mask.js';
import { tensorArg } from './tensor.js';

const FORWARD_OPTIONS = [...MASK_OPTIONS.filter((name) => name !== 'mask'), 'attnMask', 'needWeights', 'averageAttnWeights'];

export function createMultiHeadAttentionClass(module) {
  const finalizer = new FinalizationRegistry((handle) => handle.delete());

  // The four projection matrices: E x E (query, output), E x kdim, E x vdim, as one output()
  // so the heap limit is checked before the core allocates them.
  const checkWeightsFit = (e, kdim, vdim) => withHeap(module, [output('embedDim', [e, 2 * e + kdim + vdim])], () => {});

  return class MultiHeadAttention {
    #handle;
    #specs;

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
      const handle = new module.MultiHeadAttention();
      const status = handle.init(embedDim, numHeads, kdim, vdim, bias);
      if (status.kind) {
        handle.delete();
        throw new RangeError(`embedDim: could not create attention with embedDim ${embedDim}, kdim ${kdim}, vdim ${vdim}: ${status.message}`);
      }
      this.#handle = handle;
      this.#specs = JSON.parse(handle.parameterSpecs());
      this.config = Object.freeze({ embedDim, numHeads, kdim, vdim, bias });
      finalizer.register(this, handle, this);
    }

    // The state-dict entries this configuration expects: [{ name, shape }].
    get parameters() {
      return this.#specs.map(({ name, shape }) => ({ name, shape: [...shape] }));
    }

    #live() {
      if (!this.#handle) throw new TypeError('MultiHeadAttention: used after dispose()');
      return this.#handle;
    }

    // Loads PyTorch state-dict tensors by name, all or nothing: every entry is read and checked
    // (names, shapes, types) and copied into the heap before the first one replaces a weight,
    // so a failing load leaves every weight as it was. Every expected entry must be present (a
    // partial load would silently mix trained and random weights); unknown names are rejected.
    loadStateDict(dict) {
      this.#live();
      if (dict === null || typeof dict !== 'object') {
        throw new TypeError(`dict: expected an object of tensors, got ${describe(dict)}`);
      }
      const names = Object.keys(dict);
      const expected = this.#specs.map((s) => s.name);
      const unknown = names.find((name) => !expected.includes(name));
      if (unknown !== undefined) {
        throw new RangeError(`dict: unexpected entry '${unknown}'; expected ${expected.join(', ')}`);
      }
      const missing = this.#specs.find(({ name }) => !names.includes(name));
      if (missing) throw new RangeError(`dict: missing '${missing.name}' of shape ${shapeString(missing.shape)}`);
      const records = this.#specs.map(({ name, shape }) => readTensor(`dict['${name}']`, dict[name], { expected: shape }));
      const handle = this.#live();
      withHeap(module, records, (scope) => {
        const pointers = records.map((record) => scope.put(record));
        // Only an allocation inside the core can still fail from here on.
        records.forEach(({ shape }, i) => {
          check(handle.setParameter(this.#specs[i].name, pointers[i], shape[0], shape.length > 1 ? shape[1] : -1));
        });
      });
      return this;
    }

    // Re-draws the parameters as PyTorch initialises them, from a seed.
    resetParameters(seed = 0) {
      readSize('seed', seed, Number.MAX_SAFE_INTEGER);
      check(this.#live().resetParameters(seed));
      return this;
    }

    forward(query, key = query, value = key, options = {}) {
      this.#live();
      const o = readOptions('options', options, FORWARD_OPTIONS);
      const { embedDim, numHeads } = this.config;
      // The widths and the batch and rows shared by query, key and value are the core's to check.
      const q = readBatch('query', query);
      const k = key === query ? q : readBatch('key', key);
      const v = value === key ? k : readBatch('value', value);
      const [batch, nq] = q.shape;
      const nk = k.shape[1];
      const needWeights = readBoolean('needWeights', o.needWeights, true);
      const averageAttnWeights = readBoolean('averageAttnWeights', o.averageAttnWeights, true);
      const mask = readMask({ ...o, mask: o.attnMask }, {
        batch, nq, nk, heads: numHeads, names: { mask: 'attnMask' }, defaultFill: PYTORCH_FILL,
      });
      const out = output('output', [batch, nq, embedDim]);
      const weights = needWeights ? output('weights', averageAttnWeights ? [batch, nq, nk] : [batch, numHeads, nq, nk]) : null;
      const inputs = [...new Set([q, k, v])];
      const handle = this.#live();
      return withHeap(module, [...inputs, ...mask.buffers, out, weights].filter(Boolean), (scope) => {
        const outPointer = scope.alloc(out);
        const weightsPointer = weights ? scope.alloc(weights) : 0;
        const pointers = new Map(inputs.map((r) => [r, scope.put(r)]));
        const [qa, ka, va] = [q, k, v].map((r) => tensorArg(pointers.get(r), r.shape));
        const weightRows = averageAttnWeights ? batch : batch * numHeads;
        check(handle.forward(qa, ka, va, maskArg(scope, mask), averageAttnWeights, tensorArg(outPointer, out.shape),
          tensorArg(weightsPointer, [weightRows, nq, nk])));
        const result = { output: scope.take(outPointer, out) };
        if (weights) result.weights = scope.take(weightsPointer, weights);
        return result;
      });
    }

    dispose() {
      if (!this.#handle) return;
      finalizer.unregister(this);
      this.#handle.delete();
      this.#handle = undefined;
    }
  };
}
