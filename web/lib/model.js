// What every model class of the API shares (MultiHeadAttention, Seq2SeqAttention): one C++
// object behind a handle (handle.js: dispose, use after dispose), its state-dict entries by
// PyTorch name, and the state dict crossing the boundary as one flat buffer laid out in that
// order (see cpp/bindings/binding.hpp).

import { describe, readTensor, shapeString } from './arguments.js';
import { HANDLE, Owned } from './handle.js';
import { check, output, withHeap } from './heap.js';

export { HANDLE };

const count = (shape) => shape.reduce((a, b) => a * b, 1);

export function createModelBase(module) {
  return class Model extends Owned {
    #specs;

    // handle: an initialised C++ handle with parameterSpecs(), stateDict(ptr), loadStateDict(ptr).
    constructor(handle, name) {
      super(handle, name);
      this.#specs = handle.parameterSpecs();
    }

    /** The state-dict entries this configuration has: [{ name, shape }]. */
    get parameters() {
      return this.#specs.map(({ name, shape }) => ({ name, shape: [...shape] }));
    }

    /** The buffer of a whole state dict (or of its gradients), for withHeap. */
    flatParameters(name) {
      return output(name, [this.#specs.reduce((sum, { shape }) => sum + count(shape), 0)]);
    }

    /** One flat array laid out as the parameters are listed -> { name: tensor }. */
    splitParameters(data) {
      const dict = {};
      let offset = 0;
      for (const { name, shape } of this.#specs) {
        dict[name] = { data: data.slice(offset, offset + count(shape)), shape: [...shape] };
        offset += count(shape);
      }
      return dict;
    }

    // Loads tensors by state-dict name, all or nothing: every entry is read and checked (names,
    // shapes, types) and copied into the heap before the first one replaces a weight, so a
    // failing load leaves every weight as it was. Every expected entry must be present (a
    // partial load would silently mix trained and random weights); unknown names are rejected.
    loadStateDict(dict) {
      this[HANDLE]();
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
      const flat = this.flatParameters('dict');
      const handle = this[HANDLE]();
      withHeap(module, [flat], (scope) => {
        const pointer = scope.alloc(flat);
        let offset = pointer;
        for (const record of records) {
          scope.write(record, offset);
          offset += record.count * 4;
        }
        check(handle.loadStateDict(pointer));
      });
      return this;
    }

    /** The state dict under its PyTorch names, as fresh tensors (loadStateDict takes it back). */
    stateDict() {
      const handle = this[HANDLE]();
      const flat = this.flatParameters('stateDict');
      return withHeap(module, [flat], (scope) => {
        const pointer = scope.alloc(flat);
        check(handle.stateDict(pointer));
        return this.splitParameters(scope.take(pointer, flat).data);
      });
    }
  };
}
