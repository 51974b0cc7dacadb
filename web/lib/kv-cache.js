// KVCache: the keys and values of the positions seen so far, resident in the wasm heap for
// incremental (autoregressive) decoding. append() copies in only the new positions and attend()
// only the queries; the cache itself never crosses the boundary. Grouped K/V heads, a sliding
// window and rotary positions are the cache's configuration; softcap, ALiBi and sinks are
// attend()'s options (read by score-modifiers.js, as scaledDotProductAttention reads them).

import {
  MAX_SIZE, describe, readBoolean, readFloat32, readOptions, readPositiveInteger, readSize, readTensor,
} from './arguments.js';
import { HANDLE, Owned, initialisedHandle } from './handle.js';
import { check, output, withHeap } from './heap.js';
import { modifierBuffers, readModifiers } from './score-modifiers.js';

// The core's names for the configuration, as JS spells them.
const NAMES = { head_dim: 'headDim', value_dim: 'valueDim', kv_heads: 'kvHeads' };

const CONFIG_OPTIONS = ['batch', 'heads', 'headDim', 'valueDim', 'capacity', 'kvHeads', 'window', 'rotary', 'dtype'];
const DTYPES = ['f32', 'f16'];
const ROTARY_OPTIONS = ['base', 'dim', 'interleaved'];
// attend()'s options: the scale and the score modifiers other than the window (the cache's own,
// from its configuration), and returnLse.
const ATTEND_OPTIONS = ['scale', 'softcap', 'alibiSlopes', 'sinks', 'returnLse', 'window'];

// kvHeads: a divisor of heads, default heads.
function readKVHeads(value, heads) {
  if (value === undefined) return heads;
  const kvHeads = readPositiveInteger('kvHeads', value);
  if (heads % kvHeads !== 0) {
    throw new RangeError(`kvHeads: expected a divisor of heads = ${heads} (each K/V head serves heads / kvHeads query heads), got ${kvHeads}`);
  }
  return kvHeads;
}

// window: an integer >= 0 positions (0: none), default 0.
function readCacheWindow(value) {
  if (value === undefined) return 0;
  const expected = `an integer in [0, ${MAX_SIZE}] (the positions each query sees, itself included; 0: no window)`;
  if (typeof value !== 'number') throw new TypeError(`window: expected ${expected}, got ${describe(value)}`);
  if (!Number.isInteger(value) || value < 0 || value > MAX_SIZE) throw new RangeError(`window: expected ${expected}, got ${value}`);
  return value;
}

// rotary: undefined or null (none), or { base = 10000, dim = headDim, interleaved = false }.
function readCacheRotary(value, headDim) {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`rotary: expected an options object { base, dim, interleaved } (or null for none), got ${describe(value)}`);
  }
  const o = readOptions('rotary', value, ROTARY_OPTIONS);
  const base = readFloat32('rotary.base', o.base, 10000);
  if (!(base > 0 && base < Infinity)) throw new RangeError(`rotary.base: expected a finite number > 0, got ${base}`);
  if (headDim < 2) {
    throw new RangeError(`rotary.dim: expected an even number in [2, headDim], but headDim is ${headDim}: no pair of features to rotate`);
  }
  const expected = `an even number in [2, ${headDim}] (headDim)`;
  let dim;
  if (o.dim === undefined) {
    if (headDim % 2 !== 0) throw new RangeError(`rotary.dim: expected ${expected} (the default, headDim = ${headDim}, is odd: pass dim), got undefined`);
    dim = headDim;
  } else {
    if (typeof o.dim !== 'number') throw new TypeError(`rotary.dim: expected ${expected}, got ${describe(o.dim)}`);
    if (!Number.isInteger(o.dim) || o.dim % 2 !== 0 || o.dim < 2 || o.dim > headDim) {
      throw new RangeError(`rotary.dim: expected ${expected}, got ${o.dim}`);
    }
    dim = o.dim;
  }
  const interleaved = readBoolean('rotary.interleaved', o.interleaved, false);
  return Object.freeze({ base, dim, interleaved });
}

/** { KVCache, readCache }: the class of this module and a check that a value is one of it. */
export function createKVCacheClass(module) {
  // Caches of this module: one from another loadAttention() lives in another heap.
  const caches = new WeakSet();

  class KVCache extends Owned {
    constructor(config) {
      const c = readOptions('config', config, CONFIG_OPTIONS, { required: true });
      const batch = readPositiveInteger('batch', c.batch);
      const heads = readPositiveInteger('heads', c.heads);
      const headDim = readPositiveInteger('headDim', c.headDim);
      const valueDim = c.valueDim === undefined ? headDim : readPositiveInteger('valueDim', c.valueDim);
      const capacity = c.capacity === undefined ? 0 : readSize('capacity', c.capacity);
      const kvHeads = readKVHeads(c.kvHeads, heads);
      const window = readCacheWindow(c.window);
      const rotary = readCacheRotary(c.rotary, headDim);
      const dtype = c.dtype === undefined ? 'f32' : c.dtype;
      if (!DTYPES.includes(dtype)) {
        const error = typeof dtype === 'string' ? RangeError : TypeError;
        throw new error(`dtype: expected ${DTYPES.map((t) => `'${t}'`).join(' | ')}, got ${describe(dtype)}`);
      }
      // The core refuses a capacity whose storage would pass 4 GiB (a RangeError naming it).
      const handle = initialisedHandle(module.KVCache, (h) => h.init(
        batch, heads, headDim, valueDim, capacity, kvHeads, window,
        rotary !== null, rotary?.base ?? 0, rotary?.dim ?? 0, rotary?.interleaved ?? false,
        dtype === 'f16',
      ), (status) => check(status, NAMES));
      super(handle, 'KVCache');
      caches.add(this);
      this.config = Object.freeze({ batch, heads, headDim, valueDim, kvHeads, window, rotary, dtype });
    }

    /** The positions appended so far (with a window, more than the cache still holds). */
    get length() {
      return this[HANDLE]().length();
    }

    /**
     * The oldest position still held: 0 without a window; with one, it moves up as the cache
     * drops the positions no later query can see (at least the last window - 1 stay).
     */
    get firstPosition() {
      return this[HANDLE]().firstPosition();
    }

    /** The bytes its keys and values take in the wasm heap now (its capacity's worth). */
    get byteLength() {
      return this[HANDLE]().bytes();
    }

    // The shapes are checked here, against this cache's configuration, because the storage must
    // grow before k and v are copied into the heap: a cache that would pass 4 GiB then fails
    // before the new positions take heap space of their own, and stays as it was.
    // k [batch, kvHeads, t, headDim], v [batch, kvHeads, t, valueDim]; with rotary, the core
    // rotates the keys at their true positions length .. length + t - 1 as it stores them.
    append(k, v) {
      this[HANDLE]();
      const { batch, kvHeads, headDim, valueDim } = this.config;
      const keys = readTensor('k', k, { expected: [batch, kvHeads, -1, headDim] });
      const t = keys.shape[2];
      const values = readTensor('v', v, { expected: [batch, kvHeads, t, valueDim] });
      const handle = this[HANDLE]();
      withHeap(module, [keys, values], (scope) => {
        check(handle.reserve(t), NAMES);
        check(handle.append(scope.put(keys), scope.put(values), t), NAMES);
      });
      return this;
    }

    // q [batch, heads, nq, headDim] -> { output: [batch, heads, nq, valueDim], lse?: [batch,
    // heads, nq] }; query i of nq sits at position length - nq + i and sees the positions up to
    // its own (the last `window` of them with a window). The modifiers are checked here as
    // scaledDotProductAttention checks them; the window is the configuration's, not an option.
    attend(q, options = {}) {
      this[HANDLE]();
      const o = readOptions('options', options, ATTEND_OPTIONS);
      if (o.window !== undefined) {
        throw new RangeError(`window: not an attend() option (a cache's window is its configuration: new KVCache({ ..., window })), got ${describe(o.window)}`);
      }
      const { batch, heads, headDim, valueDim } = this.config;
      const queries = readTensor('q', q, { expected: [batch, heads, -1, headDim] });
      const scale = o.scale === undefined ? undefined : readFloat32('scale', o.scale);
      const modifiers = readModifiers(o, heads);  // o has no window: readModifiers leaves it unbounded
      const returnLse = readBoolean('returnLse', o.returnLse, false);
      const nq = queries.shape[2];
      const out = output('output', [batch, heads, nq, valueDim]);
      const lse = returnLse ? output('lse', [batch, heads, nq]) : null;
      const handle = this[HANDLE]();
      return withHeap(module, [queries, ...modifierBuffers(modifiers), out, lse].filter(Boolean), (scope) => {
        const outPointer = scope.alloc(out);
        const lsePointer = lse ? scope.alloc(lse) : 0;
        check(handle.attend(
          scope.put(queries), nq, scale !== undefined, scale ?? 0, modifiers.softcap,
          modifiers.alibiSlopes ? scope.put(modifiers.alibiSlopes) : 0, modifiers.sinks ? scope.put(modifiers.sinks) : 0,
          outPointer, lsePointer,
        ), NAMES);
        const result = { output: scope.take(outPointer, out) };
        if (lse) result.lse = scope.take(lsePointer, lse);
        return result;
      });
    }

    /**
     * Keeps the first n positions (firstPosition <= n <= length), dropping the newest length - n
     * (e.g. rejected draft tokens). With a window the positions before firstPosition are gone
     * already, so n cannot go below it; and attend() serves a query at position p only while
     * p - window + 1 >= firstPosition (its whole window still held). An append drops only
     * positions before the last window - 1 it finds, so rolling back to the length before the
     * last append loses nothing the next queries need; truncating further back leaves the
     * queries whose window reaches before firstPosition refused until appends carry the
     * positions past them.
     */
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
