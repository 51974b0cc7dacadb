// KVCache: the keys and values of the positions seen so far, resident in the wasm heap for
// incremental (autoregressive) decoding. append() copies in only the new positions and attend()
// only the queries; the cache itself never crosses the boundary.

import { describe, readFloat32, readOptions, readPositiveInteger, readSize, readTensor } from './arguments.js';
import { HANDLE, Owned, initialisedHandle } from './handle.js';
import { check, output, withHeap } from './heap.js';

// The core's names for the configuration, as JS spells them.
const NAMES = { head_dim: 'headDim', value_dim: 'valueDim' };

/** { KVCache, readCache }: the class of this module and a check that a value is one of it. */
export function createKVCacheClass(module) {
  // Caches of this module: one from another loadAttention() lives in another heap.
  const caches = new WeakSet();

  class KVCache extends Owned {
    constructor(config) {
      const c = readOptions('config', config, ['batch', 'heads', 'headDim', 'valueDim', 'capacity'], { required: true });
      const batch = readPositiveInteger('batch', c.batch);
      const heads = readPositiveInteger('heads', c.heads);
      const headDim = readPositiveInteger('headDim', c.headDim);
      const valueDim = c.valueDim === undefined ? headDim : readPositiveInteger('valueDim', c.valueDim);
      const capacity = c.capacity === undefined ? 0 : readSize('capacity', c.capacity);
      // The core refuses a capacity whose storage would pass 4 GiB (a RangeError naming it).
      const handle = initialisedHandle(module.KVCache, (h) => h.init(batch, heads, headDim, valueDim, capacity),
        (status) => check(status, NAMES));
      super(handle, 'KVCache');
      caches.add(this);
      this.config = Object.freeze({ batch, heads, headDim, valueDim });
    }

    /** Positions held. */
    get length() {
      return this[HANDLE]().length();
    }

    // The shapes are checked here, against this cache's configuration, because the storage must
    // grow before k and v are copied into the heap: a cache that would pass 4 GiB then fails
    // before the new positions take heap space of their own, and stays as it was.
    append(k, v) {
      this[HANDLE]();
      const { batch, heads, headDim, valueDim } = this.config;
      const keys = readTensor('k', k, { expected: [batch, heads, -1, headDim] });
      const t = keys.shape[2];
      const values = readTensor('v', v, { expected: [batch, heads, t, valueDim] });
      const handle = this[HANDLE]();
      withHeap(module, [keys, values], (scope) => {
        check(handle.reserve(t), NAMES);
        check(handle.append(scope.put(keys), scope.put(values), t), NAMES);
      });
      return this;
    }

    // q [batch, heads, nq, headDim] -> { output: [batch, heads, nq, valueDim] }; query i of nq
    // sees the first length - nq + i + 1 positions.
    attend(q, options = {}) {
      this[HANDLE]();
      const o = readOptions('options', options, ['scale']);
      const { batch, heads, headDim, valueDim } = this.config;
      const queries = readTensor('q', q, { expected: [batch, heads, -1, headDim] });
      const scale = o.scale === undefined ? undefined : readFloat32('scale', o.scale);
      const nq = queries.shape[2];
      const out = output('output', [batch, heads, nq, valueDim]);
      const handle = this[HANDLE]();
      return withHeap(module, [queries, out], (scope) => {
        const outPointer = scope.alloc(out);
        check(handle.attend(scope.put(queries), nq, scale !== undefined, scale ?? 0, outPointer), NAMES);
        return { output: scope.take(outPointer, out) };
      });
    }

    /** Keeps the first n positions. */
    truncate(n) {
      this[HANDLE]();
      readSize('n', n);
      check(this[HANDLE]().truncate(n), NAMES);
      return this;
    }

    clear() {
      this[HANDLE]().clear();
      return this;
    }
  }

  const readCache = (name, value) => {
    if (!caches.has(value)) {
      throw new TypeError(`${name}: expected a KVCache of this module (new attn.KVCache or mha.createCache), got ${describe(value)}`);
    }
    return value;
  };

  return { KVCache, readCache };
}
