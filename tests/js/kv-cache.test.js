// attn.KVCache and MultiHeadAttention's incremental self-attention, in the three builds: decoding
// through the cache (one token or a chunk at a time, past its capacity, after truncate and
// clear) equals causal scaled dot-product attention over the whole history in the
// double-precision reference; mha decoding equals mha.forward with causal: true; errors leave
// the cache as it was; many caches leave the heap flat.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, memoryOf, labelOf, otherModule } from './backends.js';
import * as ref from '../../harness/reference.js';

const { LOOSE, assertClose, mulberry32, randomTensor, randomStateDict, tensor } = ref;

// Every position appended so far, per sequence (batch row b, head h at b * heads + h), so that
// the reference can attend over the whole history at once.
class History {
  constructor({ batch, heads, headDim, valueDim = headDim }) {
    Object.assign(this, { sequences: batch * heads, batch, heads, d: headDim, dv: valueDim });
    this.keys = Array.from({ length: this.sequences }, () => []);
    this.values = Array.from({ length: this.sequences }, () => []);
  }

  get length() {
    return this.keys[0].length / this.d;
  }

  // Draws t positions and appends them to the cache and to the history.
  append(cache, t, rng) {
    const k = randomTensor(rng, [this.batch, this.heads, t, this.d]);
    const v = randomTensor(rng, [this.batch, this.heads, t, this.dv]);
    cache.append(k, v);
    for (let s = 0; s < this.sequences; s++) {
      this.keys[s].push(...k.data.subarray(s * t * this.d, (s + 1) * t * this.d));
      this.values[s].push(...v.data.subarray(s * t * this.dv, (s + 1) * t * this.dv));
    }
  }

  truncate(n) {
    for (const key of this.keys) key.length = n * this.d;
    for (const value of this.values) value.length = n * this.dv;
  }

  // Query i of nq sees the first length - nq + i + 1 positions: d2l's per-query valid lengths
  // in the reference (with nq = length that is the causal mask itself, checked separately).
  attend(q, { scale } = {}) {
    const { sequences, d, dv, length } = this;
    const nq = q.shape[2];
    const validLens = Int32Array.from({ length: sequences * nq }, (_, at) => length - nq + (at % nq) + 1);
    const k = tensor(Float32Array.from(this.keys.flat()), [sequences, length, d]);
    const v = tensor(Float32Array.from(this.values.flat()), [sequences, length, dv]);
    const { output } = ref.scaledDotProductAttention(tensor(q.data, [sequences, nq, d]), k, v, { validLens, scale });
    return { data: output.data, shape: [this.batch, this.heads, nq, dv] };
  }
}

function checkAttend(cache, history, nq, rng, options) {
  const q = randomTensor(rng, [history.batch, history.heads, nq, history.d]);
  const got = cache.attend(q, options);
  assertClose(got.output, history.attend(q, options), { ...LOOSE, label: `length ${history.length}, nq ${nq}` });
}

for (const attn of backends) {
  describe(`KVCache (${labelOf(attn)})`, () => {
    test('decoding token by token and in chunks, past the capacity, equals the causal reference', () => {
      const rng = mulberry32(7000);
      const config = { batch: 2, heads: 3, headDim: 20, valueDim: 12, capacity: 5 };
      const cache = new attn.KVCache(config);
      assert.deepEqual({ ...cache.config }, { batch: 2, heads: 3, headDim: 20, valueDim: 12, kvHeads: 3, window: 0, rotary: null, dtype: 'f32' });
      const history = new History(config);
      assert.equal(cache.length, 0);
      // Single tokens, then chunks crossing the 16-position panels, the capacity of 5 and the
      // kernel's 512-key blocks; after each, the newest 1-4 positions attend as a chunk.
      for (const t of [1, 1, 1, 4, 7, 30, 1, 150, 2, 1, 350, 1]) {
        history.append(cache, t, rng);
        assert.equal(cache.length, history.length);
        for (let nq = 1; nq <= Math.min(4, cache.length); nq++) checkAttend(cache, history, nq, rng);
      }
      checkAttend(cache, history, 37, rng, { scale: 0.3 });
      cache.dispose();
    });

    test('the whole history as queries is exactly causal attention', () => {
      const rng = mulberry32(7001);
      const cache = new attn.KVCache({ batch: 1, heads: 2, headDim: 8 });
      const history = new History({ batch: 1, heads: 2, headDim: 8 });
      history.append(cache, 19, rng);
      const q = randomTensor(rng, [1, 2, 19, 8]);
      const qs = tensor(q.data, [2, 19, 8]);
      const k = tensor(Float32Array.from(history.keys.flat()), [2, 19, 8]);
      const v = tensor(Float32Array.from(history.values.flat()), [2, 19, 8]);
      const want = ref.scaledDotProductAttention(qs, k, v, { causal: true }).output;
      assertClose(cache.attend(q).output, { data: want.data, shape: [1, 2, 19, 8] }, LOOSE);
      cache.dispose();
    });

    test('truncate and clear drop the newest positions; appends then overwrite them', () => {
      const rng = mulberry32(7002);
      const config = { batch: 1, heads: 2, headDim: 16, valueDim: 24, capacity: 64 };
      const cache = new attn.KVCache(config);
      const history = new History(config);
      history.append(cache, 40, rng);
      assert.equal(cache.truncate(21), cache);
      history.truncate(21);
      assert.equal(cache.length, 21);
      checkAttend(cache, history, 2, rng);
      history.append(cache, 9, rng);
      checkAttend(cache, history, 4, rng);
      cache.clear();
      history.truncate(0);
      assert.equal(cache.length, 0);
      history.append(cache, 3, rng);
      checkAttend(cache, history, 3, rng);
      cache.dispose();
    });

    test('errors name the argument, with expected and given, and leave the cache as it was', () => {
      const rng = mulberry32(7003);
      const config = { batch: 2, heads: 3, headDim: 4, valueDim: 5, capacity: 8 };
      const cache = new attn.KVCache(config);
      const history = new History(config);
      history.append(cache, 6, rng);
      const q = randomTensor(rng, [2, 3, 2, 4]);
      const before = cache.attend(q).output;
      const t = (shape) => randomTensor(rng, shape);

      assert.throws(() => cache.append(t([2, 3, 1, 5]), t([2, 3, 1, 5])), { name: 'RangeError', message: 'k: expected shape [2, 3, *, 4], got [2, 3, 1, 5]' });
      assert.throws(() => cache.append(t([2, 3, 2, 4]), t([2, 3, 1, 5])), { name: 'RangeError', message: 'v: expected shape [2, 3, 2, 5], got [2, 3, 1, 5]' });
      assert.throws(() => cache.append(t([3, 4]), t([3, 5])), { name: 'RangeError', message: /^k: expected shape \[2, 3, \*, 4\]/ });
      assert.throws(() => cache.append(new Float32Array(4), t([2, 3, 1, 5])), { name: 'TypeError', message: 'k: expected a tensor { data, shape }, got Float32Array(4)' });
      assert.throws(() => cache.attend(t([2, 1, 1, 4])), { name: 'RangeError', message: 'q: expected shape [2, 3, *, 4], got [2, 1, 1, 4]' });
      assert.throws(() => cache.attend(t([2, 3, 7, 4])), { name: 'RangeError', message: /^q: expected at most length\(\) = 6 queries, got 7/ });
      assert.throws(() => cache.attend(q, { scale: NaN }), { name: 'RangeError', message: /^scale: expected a finite number/ });
      assert.throws(() => cache.attend(q, { scale: '1' }), { name: 'TypeError', message: /^scale: expected a number/ });
      assert.throws(() => cache.truncate(7), { name: 'RangeError', message: 'n: expected a length in [0, 6], got 7' });
      assert.throws(() => cache.truncate(-1), { name: 'RangeError', message: /^n: expected an integer in \[0, / });
      assert.equal(cache.length, 6);
      assertClose(cache.attend(q).output, before, { atol: 0, rtol: 0, label: 'after the errors' });

      assert.throws(() => new attn.KVCache(), { name: 'TypeError', message: /^config: expected an options object/ });
      assert.throws(() => new attn.KVCache({ batch: 1, heads: 1 }), { name: 'TypeError', message: /^headDim: expected a non-negative integer, got undefined/ });
      assert.throws(() => new attn.KVCache({ batch: 0, heads: 1, headDim: 4 }), { name: 'RangeError', message: 'batch: expected an integer > 0, got 0' });
      assert.throws(() => new attn.KVCache({ batch: 1, heads: 1, headDim: 4, valueDim: 2.5 }), { name: 'RangeError', message: /^valueDim: expected an integer in/ });
      assert.throws(() => new attn.KVCache({ batch: 1, heads: 1, headDim: 4, capacity: -1 }), { name: 'RangeError', message: /^capacity: expected an integer in/ });
      cache.dispose();
    });

    test('a cache past the 4 GiB heap is a RangeError before anything is allocated, and stays usable', () => {
      const memory = memoryOf(attn);
      const heapBefore = memory.buffer.byteLength;
      // 2^24 sequences of 16 x 16 key floats (a panel) and 16 value floats at one position: 18 GiB.
      assert.throws(() => new attn.KVCache({ batch: 2 ** 16, heads: 2 ** 8, headDim: 16, valueDim: 1, capacity: 1 }),
        { name: 'RangeError', message: /^capacity: 1 positions would take 1\.\d+e\+10 bytes, more than the 4 GiB a wasm32 heap holds$/ });
      // One position of 2^25 sequences of width 1 takes 16 key + 16 value floats each: 4 GiB.
      // The cache grows before k and v are copied in, so the failing append moves nothing
      // into the heap (and the untouched zero-filled arrays cost no memory either).
      const wide = new attn.KVCache({ batch: 2 ** 13, heads: 2 ** 12, headDim: 1 });
      const k = tensor(new Float32Array(2 ** 25), [2 ** 13, 2 ** 12, 1, 1]);
      assert.throws(() => wide.append(k, k), { name: 'RangeError', message: /^k: 1 positions would take 4\.29497e\+09 bytes, more than the 4 GiB a wasm32 heap holds$/ });
      assert.equal(wide.length, 0);
      wide.dispose();
      // Past what the core's 32-bit sizes hold: batch * heads.
      assert.throws(() => new attn.KVCache({ batch: 2 ** 20, heads: 2 ** 20, headDim: 1 }), { name: 'RangeError', message: /^heads: expected batch \* heads at most 2147483647, got 1048576 \* 1048576/ });
      assert.ok(memory.buffer.byteLength - heapBefore < 64 * 2 ** 20, 'the failures did not grow the heap');
      // The module goes on working.
      const rng = mulberry32(7004);
      const cache = new attn.KVCache({ batch: 1, heads: 1, headDim: 4 });
      const history = new History({ batch: 1, heads: 1, headDim: 4 });
      history.append(cache, 3, rng);
      checkAttend(cache, history, 2, rng);
      cache.dispose();
    });

    test('use after dispose is a TypeError; dispose twice does nothing', () => {
      const cache = new attn.KVCache({ batch: 1, heads: 1, headDim: 2 });
      cache.dispose();
      cache.dispose();
      const used = { name: 'TypeError', message: 'KVCache: used after dispose()' };
      const x = tensor(new Float32Array(2), [1, 1, 1, 2]);
      assert.throws(() => cache.length, used);
      assert.throws(() => cache.append(x, x), used);
      assert.throws(() => cache.attend(x), used);
      assert.throws(() => cache.truncate(0), used);
      assert.throws(() => cache.clear(), used);
      // Disposed by a getter while the arguments are read: caught before the heap is touched.
      const live = new attn.KVCache({ batch: 1, heads: 1, headDim: 2 });
      const sneaky = { get data() { live.dispose(); return x.data; }, shape: [1, 1, 1, 2] };
      assert.throws(() => live.append(sneaky, x), used);
    });
  });

  describe(`MultiHeadAttention with a KV cache (${labelOf(attn)})`, () => {
    const decode = (mha, query, key, value, chunks, cacheOptions) => {
      const [B, n] = query.shape;
      const slice = (x, from, t) => {
        const width = x.shape[2];
        const data = new Float32Array(B * t * width);
        for (let b = 0; b < B; b++) data.set(x.data.subarray((b * n + from) * width, (b * n + from + t) * width), b * t * width);
        return tensor(data, [B, t, width]);
      };
      const cache = mha.createCache({ batch: B, ...cacheOptions });
      const out = new Float32Array(B * n * mha.config.embedDim);
      let from = 0;
      for (const t of chunks) {
        const { output } = mha.forward(slice(query, from, t), key === query ? slice(query, from, t) : slice(key, from, t),
          slice(value, from, t), { cache });
        assert.equal(cache.length, from + t);
        const E = mha.config.embedDim;
        for (let b = 0; b < B; b++) out.set(output.data.subarray(b * t * E, (b + 1) * t * E), (b * n + from) * E);
        from += t;
      }
      cache.dispose();
      return tensor(out, [B, n, mha.config.embedDim]);
    };

    for (const [label, config] of [
      ['packed weights with bias', { embedDim: 12, numHeads: 3 }],
      ['packed weights without bias', { embedDim: 8, numHeads: 2, bias: false }],
      ['separate projections (kdim, vdim)', { embedDim: 8, numHeads: 4, kdim: 5, vdim: 7 }],
    ]) {
      test(`decoding equals the causal forward of the whole sequence: ${label}`, () => {
        const rng = mulberry32(7100);
        const mha = new attn.MultiHeadAttention(config);
        const dict = randomStateDict(rng, config);
        mha.loadStateDict(dict);
        const n = 21;
        const x = randomTensor(rng, [2, n, config.embedDim]);
        const key = config.kdim ? randomTensor(rng, [2, n, config.kdim]) : x;
        const value = config.vdim ? randomTensor(rng, [2, n, config.vdim]) : x;
        const want = ref.multiHeadAttention(dict, config, x, key, value, { causal: true }).output;
        const whole = mha.forward(x, key, value, { causal: true, needWeights: false }).output;
        assertClose(whole, want, { ...LOOSE, label: 'forward' });
        for (const chunks of [Array(n).fill(1), [5, 1, 0, 9, 2, 4]]) {
          assertClose(decode(mha, x, key, value, chunks, { capacity: 3 }), want, { ...LOOSE, label: `chunks ${chunks}` });
        }
        mha.dispose();
      });
    }

    test('createCache shapes a KVCache for the heads; errors leave the cache as it was', async () => {
      const rng = mulberry32(7101);
      const mha = new attn.MultiHeadAttention({ embedDim: 8, numHeads: 2 });
      const cache = mha.createCache({ batch: 2, capacity: 4 });
      assert.ok(cache instanceof attn.KVCache);
      assert.deepEqual({ ...cache.config }, { batch: 2, heads: 2, headDim: 4, valueDim: 4, kvHeads: 2, window: 0, rotary: null, dtype: 'f32' });
      const x = randomTensor(rng, [2, 3, 8]);
      mha.forward(x, x, x, { cache });
      const next = randomTensor(rng, [2, 1, 8]);

      const other = new attn.MultiHeadAttention({ embedDim: 8, numHeads: 4 }).createCache({ batch: 2 });
      assert.throws(() => mha.forward(next, next, next, { cache: other }),
        { name: 'RangeError', message: 'cache: expected a cache of 2 heads, head_dim = value_dim = 4, without kv_heads, window or rotary (from create_cache), got heads 4, head_dim 2, value_dim 2, kv_heads 4, window 0' });
      // A cache that would compute another attention than the layer's (PyTorch's) is refused.
      for (const config of [{ kvHeads: 1 }, { window: 3 }, { rotary: {} }]) {
        const modern = new attn.KVCache({ batch: 2, heads: 2, headDim: 4, ...config });
        assert.throws(() => mha.forward(next, next, next, { cache: modern }), { name: 'RangeError', message: /^cache: expected a cache of 2 heads/ });
        modern.dispose();
      }
      const wrongBatch = randomTensor(rng, [3, 1, 8]);
      assert.throws(() => mha.forward(wrongBatch, wrongBatch, wrongBatch, { cache }), { name: 'RangeError', message: 'query: expected shape [2, *, 8], got [3, 1, 8]' });
      assert.throws(() => mha.forward(next, x, x, { cache }), { name: 'RangeError', message: 'key: expected shape [2, 1, 8], got [2, 3, 8]' });
      assert.throws(() => mha.forward(next, next, next, { cache: {} }), { name: 'TypeError', message: /^cache: expected a KVCache of this module/ });
      const foreign = (await otherModule(attn)).KVCache;
      const foreignCache = new foreign({ batch: 2, heads: 2, headDim: 4 });
      assert.throws(() => mha.forward(next, next, next, { cache: foreignCache }), { name: 'TypeError', message: /^cache: expected a KVCache of this module/ });
      foreignCache.dispose();
      assert.throws(() => mha.forward(next, next, next, { cache, needWeights: true }), { name: 'RangeError', message: /^needWeights: not supported with a cache/ });
      assert.throws(() => mha.forward(next, next, next, { cache, keyPaddingMask: new Uint8Array(2) }), { name: 'RangeError', message: /^keyPaddingMask: not supported with a cache/ });
      assert.throws(() => mha.createCache({ batch: 0 }), { name: 'RangeError', message: 'batch: expected an integer > 0, got 0' });
      assert.throws(() => mha.createCache(), { name: 'TypeError', message: /^options: expected an options object/ });
      assert.equal(other.length, 0);

      // Still exactly the first three positions: decoding goes on as if nothing had happened.
      assert.equal(cache.length, 3);
      const after = mha.forward(next, next, next, { cache, causal: true, needWeights: false }).output;
      const fresh = mha.createCache({ batch: 2 });
      mha.forward(x, x, x, { cache: fresh });
      assertClose(after, mha.forward(next, next, next, { cache: fresh }).output, { atol: 0, rtol: 0 });

      other.dispose();
      cache.dispose();
      assert.throws(() => mha.forward(next, next, next, { cache }), { name: 'TypeError', message: 'KVCache: used after dispose()' });
      mha.dispose();
      assert.throws(() => mha.forward(next, next, next, { cache: fresh }), { name: 'TypeError', message: 'MultiHeadAttention: used after dispose()' });
      assert.throws(() => mha.createCache({ batch: 1 }), { name: 'TypeError', message: 'MultiHeadAttention: used after dispose()' });
      fresh.dispose();
    });

    test('many append / attend / decode / dispose cycles leave the heap flat', () => {
      const memory = memoryOf(attn);
      const rng = mulberry32(7102);
      const mha = new attn.MultiHeadAttention({ embedDim: 16, numHeads: 4 });
      const token = randomTensor(rng, [1, 1, 16]);
      const k = randomTensor(rng, [1, 4, 64, 8]);
      const q = randomTensor(rng, [1, 4, 2, 8]);
      const cycle = () => {
        const cache = new attn.KVCache({ batch: 1, heads: 4, headDim: 8, capacity: 16 });
        for (let i = 0; i < 4; i++) cache.append(k, k);  // grows 16 -> 64 -> 128 -> 256
        cache.attend(q);
        assert.throws(() => cache.attend(randomTensor(rng, [1, 4, 2, 7])), RangeError);
        cache.dispose();
        const decoder = mha.createCache({ batch: 1 });
        for (let i = 0; i < 3; i++) mha.forward(token, token, token, { cache: decoder });
        decoder.dispose();
      };
      for (let i = 0; i < 50; i++) cycle();  // warm up: let the allocator reach its working size
      const before = memory.buffer.byteLength;
      for (let i = 0; i < 2000; i++) cycle();
      // Each cycle holds ~0.15 MiB of cache storage: a leak would grow the heap by ~300 MiB.
      assert.equal(memory.buffer.byteLength, before, 'the heap grew');
      mha.dispose();
    });
  });
}
