// MultiHeadAttention: torch.nn.MultiheadAttention(batch_first=True) in wasm. Each instance owns
// a C++ object; dispose() frees it (a FinalizationRegistry frees forgotten ones eventually).

import { check, withHeap } from './heap.js';
import { prepareMask } from './mask.js';
import { checkAllocation, checkBoolean, checkPositiveInteger, checkSize, checkTensor, describe, tensor } from './tensor.js';

export function createMultiHeadAttentionClass(module) {
  const finalizer = new FinalizationRegistry((handle) => handle.delete());

  return class MultiHeadAttention {
    #handle;
    #specs;

    constructor(config) {
      if (config === null || typeof config !== 'object') {
        throw new TypeError(`config: expected { embedDim, numHeads, kdim?, vdim?, bias? }, got ${describe(config)}`);
      }
      const { embedDim, numHeads, kdim = embedDim, vdim = embedDim, bias = true } = config;
      checkPositiveInteger('embedDim', embedDim);
      checkPositiveInteger('numHeads', numHeads);
      if (embedDim % numHeads !== 0) {
        throw new RangeError(`numHeads: expected a divisor of embedDim ${embedDim}, got ${numHeads}`);
      }
      checkPositiveInteger('kdim', kdim);
      checkPositiveInteger('vdim', vdim);
      checkBoolean('bias', bias);
      // The four projection matrices: E x E (query, output), E x kdim, E x vdim.
      checkAllocation('embedDim', [embedDim, 2 * embedDim + kdim + vdim]);
      const handle = new module.MultiHeadAttention();
      const error = handle.init(embedDim, numHeads, kdim, vdim, bias);
      if (error) {
        handle.delete();
        throw new RangeError(`embedDim: could not create attention with embedDim ${embedDim}, kdim ${kdim}, vdim ${vdim}: ${error}`);
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

    // Loads PyTorch state-dict tensors by name. Every expected entry must be present (a partial
    // load would silently mix trained and random weights); unknown names are rejected.
    loadStateDict(dict) {
      const handle = this.#live();
      if (dict === null || typeof dict !== 'object') {
        throw new TypeError(`dict: expected an object of tensors, got ${describe(dict)}`);
      }
      const expected = new Set(this.#specs.map((s) => s.name));
      for (const name of Object.keys(dict)) {
        if (!expected.has(name)) {
          throw new RangeError(`dict: unexpected entry '${name}'; expected ${[...expected].join(', ')}`);
        }
      }
      for (const { name, shape } of this.#specs) {
        if (!(name in dict)) throw new RangeError(`dict: missing '${name}' of shape [${shape.join(', ')}]`);
        checkTensor(`dict['${name}']`, dict[name], shape);
      }
      withHeap(module, (scope) => {
        for (const { name, shape } of this.#specs) {
          check(handle.setParameter(name, scope.put(dict[name].data), shape[0], shape.length > 1 ? shape[1] : -1));
        }
      });
      return this;
    }

    // Re-draws the parameters as PyTorch initialises them, from a seed.
    resetParameters(seed = 0) {
      checkSize('seed', seed);
      check(this.#live().resetParameters(seed));
      return this;
    }

    forward(query, key = query, value = key, options = {}) {
      const handle = this.#live();
      const { embedDim, numHeads, kdim, vdim } = this.config;
      const [batch, nq] = checkTensor('query', query, [-1, -1, embedDim]);
      const [, nk] = checkTensor('key', key, [batch, -1, kdim]);
      checkTensor('value', value, [batch, nk, vdim]);
      if (options === null || typeof options !== 'object') {
        throw new TypeError(`options: expected an options object, got ${describe(options)}`);
      }
      const { keyPaddingMask, attnMask, validLens, causal, fill, needWeights = true, averageAttnWeights = true } = options;
      checkBoolean('needWeights', needWeights);
      checkBoolean('averageAttnWeights', averageAttnWeights);
      const weightShape = averageAttnWeights ? [batch, nq, nk] : [batch, numHeads, nq, nk];
      checkAllocation('output', [batch, nq, embedDim]);
      if (needWeights) checkAllocation('weights', weightShape);
      return withHeap(module, (scope) => {
        const mask = prepareMask(scope, { validLens, mask: attnMask, keyPaddingMask, causal, fill }, {
          batch, nq, nk, heads: numHeads, names: { mask: 'attnMask' }, defaultFill: -Infinity,
        });
        const outCount = batch * nq * embedDim;
        const weightCount = needWeights ? weightShape.reduce((a, b) => a * b, 1) : 0;
        const out = scope.alloc(outCount);
        const w = needWeights ? scope.alloc(weightCount) : 0;
        const weightRows = averageAttnWeights ? batch : batch * numHeads;
        check(handle.forward(
          { data: scope.put(query.data), batch, rows: nq, cols: embedDim },
          { data: scope.put(key.data), batch, rows: nk, cols: kdim },
          { data: scope.put(value.data), batch, rows: nk, cols: vdim },
          mask, averageAttnWeights,
          { data: out, batch, rows: nq, cols: embedDim },
          { data: w, batch: weightRows, rows: nq, cols: nk },
        ));
        const result = { output: tensor(scope.take(out, outCount), [batch, nq, embedDim]) };
        if (needWeights) result.weights = tensor(scope.take(w, weightCount), weightShape);
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
