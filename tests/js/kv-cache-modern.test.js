// attn.KVCache with grouped K/V heads, a sliding window, rotary positions and the score
// modifiers (softcap, ALiBi, sinks, lse), in the three builds. Decoding through the cache, one
// token or several per append, gives at every step the rows of scaledDotProductAttention over the
// whole sequence in the heads layout with causal: true, the cache's window as window: [w - 1, 0]
// and the same modifiers, with q and k rotated by applyRotary at positions 0..n-1 when the cache
// rotates. Causal rows depend only on the positions up to their own, so one reference call over
// the whole sequence serves every step. Both sides are this package's float32 paths (the decode
// kernel and the fused forward, each tested against double references elsewhere), so the
// tolerance is the contract's tight one (1e-6 absolute + 1e-5 relative); the sequences stay
// under the 1024 positions past which the cache attends in chunks. Then truncate within a
// window, the configuration's and attend's errors, and the module working after them.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { TIGHT, assertClose, mulberry32, randomTensor } from '../../harness/reference.js';

/** Positions [from, from + count) of axis 2 of x ([B, H, n, ...rest]). */
function positions(x, from, count) {
  const [B, H, n, ...rest] = x.shape;
  const width = rest.reduce((a, b) => a * b, 1);
  const data = new Float32Array(B * H * count * width);
  for (let m = 0; m < B * H; m++) {
    data.set(x.data.subarray((m * n + from) * width, (m * n + from + count) * width), m * count * width);
  }
  return { data, shape: [B, H, count, ...rest] };
}

/** The first `n` positions of x followed by every position of y, along axis 2. */
function splice(x, n, y) {
  const [B, H, , ...rest] = x.shape;
  const width = rest.reduce((a, b) => a * b, 1);
  const m = y.shape[2];
  const data = new Float32Array(B * H * (n + m) * width);
  for (let s = 0; s < B * H; s++) {
    data.set(x.data.subarray(s * x.shape[2] * width, (s * x.shape[2] + n) * width), s * (n + m) * width);
    data.set(y.data.subarray(s * m * width, (s + 1) * m * width), (s * (n + m) + n) * width);
  }
  return { data, shape: [B, H, n + m, ...rest] };
}

/** Random q [B, H, n, d], k [B, Hkv, n, d], v [B, Hkv, n, dv] for a cache's configuration. */
function sequence(rng, { batch, heads, kvHeads = heads, headDim, valueDim = headDim }, n) {
  return {
    q: randomTensor(rng, [batch, heads, n, headDim]),
    k: randomTensor(rng, [batch, kvHeads, n, headDim]),
    v: randomTensor(rng, [batch, kvHeads, n, valueDim]),
  };
}

/**
 * scaledDotProductAttention over the whole sequence as the cache computes it: causal, the
 * window as [window - 1, 0], the same modifiers, q and k rotated at positions 0..n-1 by the
 * cache's own rotary settings, with the lse.
 */
function reference(attn, cache, { q, k, v }, options) {
  const { window, rotary, dtype } = cache.config;
  const rotate = (x) => (rotary ? attn.applyRotary(x, rotary) : x);
  // A cache of halves stores the rotated keys and the values rounded to halves.
  const stored = (x) => (dtype === 'f16' ? { data: x.data.map(halfRounded), shape: x.shape } : x);
  return attn.scaledDotProductAttention(rotate(q), stored(rotate(k)), stored(v), {
    ...options, causal: true, window: window > 0 ? [window - 1, 0] : null, returnLse: true,
  });
}

/**
 * x rounded to the nearest IEEE half, ties to even, from the format's definition: 11
 * significant bits, a quantum of 2^-24 below 2^-14 (|x| stays far below the overflow here).
 */
function halfRounded(x) {
  if (x === 0) return x;
  let exponent = Math.floor(Math.log2(Math.abs(x)));
  if (2 ** exponent > Math.abs(x)) exponent -= 1;  // log2's rounding at a power of two
  if (2 ** (exponent + 1) <= Math.abs(x)) exponent += 1;
  const quantum = 2 ** (Math.max(exponent, -14) - 10);
  const scaled = x / quantum, floor = Math.floor(scaled), rest = scaled - floor;
  const rounded = rest > 0.5 || (rest === 0.5 && floor % 2 !== 0) ? floor + 1 : floor;
  return rounded * quantum;
}

/** The cache's attend of the last nq positions against the reference's rows. */
function checkStep(cache, seq, want, nq, options, label) {
  const length = cache.length;
  const got = cache.attend(positions(seq.q, length - nq, nq), { ...options, returnLse: true });
  assertClose(got.output, positions(want.output, length - nq, nq), { ...TIGHT, label: `${label}: output at length ${length}, nq ${nq}` });
  const lse = { data: want.lse.data, shape: [...want.lse.shape, 1] };  // [B, H, n] as [B, H, n, 1]
  const wantLse = positions(lse, length - nq, nq);
  assertClose(got.lse, { data: wantLse.data, shape: wantLse.shape.slice(0, 3) }, { ...TIGHT, label: `${label}: lse at length ${length}, nq ${nq}` });
}

/**
 * Decodes a random sequence through a new cache of `config`, appending `schedule[i]` positions
 * at step i and attending after each with the newest positions as queries (as many as were
 * appended; without a window also up to 4 or more). Returns firstPosition after every step.
 */
function decode(attn, config, schedule, options, seed) {
  const rng = mulberry32(seed);
  const n = schedule.reduce((a, b) => a + b, 0);
  const cache = new attn.KVCache(config);
  const seq = sequence(rng, config, n);
  const want = reference(attn, cache, seq, options);
  const firsts = [];
  const label = `schedule ${schedule.length === n ? 'one at a time' : schedule.join(',')}`;
  for (const t of schedule) {
    const length = cache.length;
    cache.append(positions(seq.k, length, t), positions(seq.v, length, t));
    assert.equal(cache.length, length + t);
    const counts = cache.config.window > 0 ? [t] : [...new Set([t, Math.min(4, cache.length), Math.min(t + 3, cache.length)])];
    for (const nq of counts) if (nq > 0) checkStep(cache, seq, want, nq, options, label);
    firsts.push(cache.firstPosition);
  }
  cache.dispose();
  return firsts;
}

// Chunks of 1 to 9 positions, 40 in all.
const CHUNKS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 1];
const ONE_AT_A_TIME = Array(40).fill(1);
const SLOPES = [0.5, 0.25, 0.125, 0.0625];
const SINKS = [0.3, -1, 2, 0];

// [label, config, attend options, seed]
const CASES = [
  ['GQA: 4 heads over 2 K/V heads, valueDim != headDim', { batch: 2, heads: 4, kvHeads: 2, headDim: 8, valueDim: 6 }, {}, 7200],
  ['GQA: 4 heads over 1 K/V head (multi-query)', { batch: 1, heads: 4, kvHeads: 1, headDim: 16, capacity: 3 }, {}, 7201],
  ['a window of 5', { batch: 2, heads: 2, headDim: 8, window: 5 }, {}, 7202],
  ['a window of 1 (each query sees itself)', { batch: 1, heads: 2, headDim: 4, window: 1 }, {}, 7203],
  ['a window longer than the sequence', { batch: 1, heads: 2, headDim: 8, window: 64 }, {}, 7204],
  ['rotary, half-split pairs, all of headDim', { batch: 1, heads: 2, headDim: 8, rotary: {} }, {}, 7205],
  ['rotary, interleaved pairs, dim 4 of 8, base 500', { batch: 2, heads: 2, headDim: 8, rotary: { base: 500, dim: 4, interleaved: true } }, {}, 7206],
  ['softcap, ALiBi, sinks and a scale', { batch: 2, heads: 4, headDim: 8 }, { softcap: 0.9, alibiSlopes: SLOPES, sinks: Float32Array.from(SINKS), scale: 0.6 }, 7207],
  ['keys and values stored as halves (dtype f16), GQA', { batch: 2, heads: 4, kvHeads: 2, headDim: 8, dtype: 'f16' }, {}, 7209],
  ['everything: GQA, a window of 5, rotary, f16, softcap, ALiBi, sinks',
    { batch: 2, heads: 4, kvHeads: 2, headDim: 8, valueDim: 4, window: 5, rotary: { dim: 6, interleaved: true, base: 1000 }, dtype: 'f16' },
    { softcap: 2, alibiSlopes: Float32Array.from(SLOPES), sinks: SINKS }, 7208],
];

for (const attn of backends) {
  describe(`KVCache with grouped heads, a window, rotary and modifiers (${labelOf(attn)})`, () => {
    for (const [label, config, options, seed] of CASES) {
      test(`decoding equals scaledDotProductAttention of the whole sequence: ${label}`, () => {
        for (const schedule of [ONE_AT_A_TIME, CHUNKS]) decode(attn, config, schedule, options, seed);
      });
    }

    test('the configuration is frozen with every field resolved', () => {
      const cache = new attn.KVCache({ batch: 1, heads: 4, headDim: 8, kvHeads: 2, window: 3, rotary: { dim: 4 } });
      assert.deepEqual(cache.config, {
        batch: 1, heads: 4, headDim: 8, valueDim: 8, kvHeads: 2, window: 3, rotary: { base: 10000, dim: 4, interleaved: false }, dtype: 'f32',
      });
      assert.ok(Object.isFrozen(cache.config) && Object.isFrozen(cache.config.rotary));
      assert.equal(cache.firstPosition, 0);
      cache.dispose();
      const plain = new attn.KVCache({ batch: 1, heads: 2, headDim: 4, rotary: null });
      assert.deepEqual({ ...plain.config }, { batch: 1, heads: 2, headDim: 4, valueDim: 4, kvHeads: 2, window: 0, rotary: null, dtype: 'f32' });
      plain.dispose();
    });

    test('a window of 5 over 40 tokens: the cache drops what no query sees, and firstPosition follows', () => {
      const window = 5;
      // Capacity 0 grows to 16 before the first drop; 10 (twice the window, the least at which
      // the cache moves positions instead of growing) drops every 6 appends.
      for (const [schedule, capacity, moves] of [[ONE_AT_A_TIME, 0, 2], [CHUNKS, 0, 2], [ONE_AT_A_TIME, 10, 5]]) {
        const firsts = decode(attn, { batch: 1, heads: 2, kvHeads: 1, headDim: 8, window, capacity }, schedule, {}, 7210);
        let length = 0;
        firsts.forEach((first, i) => {
          const before = length;
          length += schedule[i];
          // Never more than the window needs is dropped: the last window - 1 before each append stay.
          assert.ok(first <= Math.max(0, before - (window - 1)), `step ${i}: firstPosition ${first} after an append at length ${before}`);
          // The storage stays O(window): the positions held never pass a few windows.
          assert.ok(length - first <= 4 * window + 9, `step ${i}: ${length - first} positions held`);
          if (i > 0) assert.ok(first >= firsts[i - 1], 'firstPosition never moves back');
        });
        assert.ok(new Set(firsts).size >= moves + 1, `firstPosition took only the values ${[...new Set(firsts)]}`);
      }
    });

    test('a cache of halves takes half the bytes of a float32 one', () => {
      const config = { batch: 1, heads: 4, kvHeads: 2, headDim: 32, capacity: 100 };
      const f32 = new attn.KVCache(config), f16 = new attn.KVCache({ ...config, dtype: 'f16' });
      // K and V of 2 heads, 100 positions (key panels of 16 positions: 112), 32 wide.
      assert.equal(f32.byteLength, 2 * (112 + 100) * 32 * 4);
      assert.equal(f16.byteLength, f32.byteLength / 2);
      f32.dispose();
      f16.dispose();
    });

    test('without a window nothing is dropped: firstPosition stays 0', () => {
      const firsts = decode(attn, { batch: 1, heads: 2, headDim: 4, capacity: 2 }, CHUNKS, {}, 7211);
      assert.deepEqual([...new Set(firsts)], [0]);
    });

    test('truncate within a window: rolling back drafts, and truncating past what the window needs', () => {
      const rng = mulberry32(7212);
      const window = 5;
      const config = { batch: 1, heads: 4, kvHeads: 2, headDim: 8, window, rotary: { interleaved: true } };
      const cache = new attn.KVCache(config);
      const options = { alibiSlopes: SLOPES };
      const seq = sequence(rng, config, 30);
      for (let i = 0; i < 30; i++) cache.append(positions(seq.k, i, 1), positions(seq.v, i, 1));
      const first = cache.firstPosition;
      assert.ok(first > 0, 'the window dropped positions');

      // Three draft tokens, then rejected: back to 30, and two other tokens decoded one by one.
      const drafts = sequence(rng, config, 3);
      cache.append(drafts.k, drafts.v);
      const firstAfterDrafts = cache.firstPosition;
      assert.equal(cache.truncate(30), cache);
      assert.equal(cache.length, 30);
      assert.equal(cache.firstPosition, firstAfterDrafts, 'truncate keeps firstPosition');
      const other = sequence(rng, config, 2);
      const spliced = { q: splice(seq.q, 30, other.q), k: splice(seq.k, 30, other.k), v: splice(seq.v, 30, other.v) };
      const want = reference(attn, cache, spliced, options);
      for (let i = 0; i < 2; i++) {
        cache.append(positions(other.k, i, 1), positions(other.v, i, 1));
        checkStep(cache, spliced, want, 1, options, 'after rolling back the drafts');
      }

      // Below firstPosition: refused, the cache unchanged.
      const low = cache.firstPosition - 1;
      assert.throws(() => cache.truncate(low), {
        name: 'RangeError', message: `n: expected a length in [${cache.firstPosition}, 32] (the window dropped the positions before), got ${low}`,
      });
      assert.equal(cache.length, 32);
      checkStep(cache, spliced, want, 1, options, 'after the refused truncate');

      // To firstPosition itself: allowed, but a query there would need positions already gone,
      // until window - 1 new ones are appended.
      const at = cache.firstPosition;
      cache.truncate(at);
      const fresh = sequence(rng, config, 2 * window);
      const again = { q: splice(spliced.q, at, fresh.q), k: splice(spliced.k, at, fresh.k), v: splice(spliced.v, at, fresh.v) };
      const wantAgain = reference(attn, cache, again, options);
      let served = 0;
      for (let i = 0; i < 2 * window; i++) {
        cache.append(positions(fresh.k, i, 1), positions(fresh.v, i, 1));
        const q = positions(again.q, cache.length - 1, 1);
        if (cache.length - 1 - window + 1 < cache.firstPosition) {
          assert.throws(() => cache.attend(q, options), { name: 'RangeError', message: /^q: expected at most 0 queries now: their windows reach back to positions \d+\.\., and the cache holds \d+\.\. \(append before attending again\), got 1$/ });
        } else {
          checkStep(cache, again, wantAgain, 1, options, 'after truncating to firstPosition');
          served++;
        }
      }
      // Positions at + window - 1 .. at + 2 window - 1 have their whole window again.
      assert.equal(served, window + 1);
      cache.dispose();
    });

    test('errors name the option with expected and given; the module keeps working', () => {
      const make = (extra) => () => new attn.KVCache({ batch: 1, heads: 4, headDim: 8, ...extra });
      const configErrors = [
        [{ kvHeads: 3 }, RangeError, /^kvHeads: expected a divisor of heads = 4 \(.*\), got 3$/],
        [{ kvHeads: 8 }, RangeError, /^kvHeads: expected a divisor of heads = 4 .*, got 8$/],
        [{ kvHeads: 0 }, RangeError, /^kvHeads: expected an integer > 0, got 0$/],
        [{ kvHeads: '2' }, TypeError, /^kvHeads: expected a non-negative integer, got '2'$/],
        [{ window: -1 }, RangeError, /^window: expected an integer in \[0, 2147483647\] .*, got -1$/],
        [{ dtype: 'f64' }, RangeError, /^dtype: expected 'f32' \| 'f16', got 'f64'$/],
        [{ dtype: 16 }, TypeError, /^dtype: expected 'f32' \| 'f16', got 16$/],
        [{ window: 2.5 }, RangeError, /^window: expected an integer .*, got 2\.5$/],
        [{ window: '5' }, TypeError, /^window: expected an integer .*, got '5'$/],
        [{ window: [4, 0] }, TypeError, /^window: expected an integer .*, got Array\(2\)$/],
        [{ rotary: true }, TypeError, /^rotary: expected an options object \{ base, dim, interleaved \} \(or null for none\), got true$/],
        [{ rotary: 10000 }, TypeError, /^rotary: expected an options object .*, got 10000$/],
        [{ rotary: [] }, TypeError, /^rotary: expected an options object .*, got Array\(0\)$/],
        [{ rotary: { dim: 3 } }, RangeError, /^rotary\.dim: expected an even number in \[2, 8\] \(headDim\), got 3$/],
        [{ rotary: { dim: 10 } }, RangeError, /^rotary\.dim: expected an even number in \[2, 8\] \(headDim\), got 10$/],
        [{ rotary: { dim: 0 } }, RangeError, /^rotary\.dim: expected an even number in \[2, 8\] \(headDim\), got 0$/],
        [{ rotary: { dim: '4' } }, TypeError, /^rotary\.dim: expected an even number .*, got '4'$/],
        [{ rotary: { base: 0 } }, RangeError, /^rotary\.base: expected a finite number > 0, got 0$/],
        [{ rotary: { base: -2 } }, RangeError, /^rotary\.base: expected a finite number > 0, got -2$/],
        [{ rotary: { base: Infinity } }, RangeError, /^rotary\.base: expected a finite number > 0, got Infinity$/],
        [{ rotary: { base: NaN } }, RangeError, /^rotary\.base: expected a finite number > 0, got NaN$/],
        [{ rotary: { base: '1e4' } }, TypeError, /^rotary\.base: expected a number, got '1e4'$/],
        [{ rotary: { interleaved: 1 } }, TypeError, /^rotary\.interleaved: expected a boolean, got 1$/],
        [{ headDim: 7, rotary: {} }, RangeError, /^rotary\.dim: expected an even number in \[2, 7\] \(headDim\) \(the default, headDim = 7, is odd: pass dim\), got undefined$/],
        [{ headDim: 1, rotary: { dim: 2 } }, RangeError, /^rotary\.dim: .*headDim is 1: no pair of features to rotate$/],
      ];
      for (const [extra, ErrorType, message] of configErrors) {
        assert.throws(make(extra), { name: ErrorType.name, message }, JSON.stringify(extra));
      }

      const rng = mulberry32(7213);
      const config = { batch: 1, heads: 4, kvHeads: 2, headDim: 8, window: 3 };
      const cache = new attn.KVCache(config);
      const seq = sequence(rng, config, 20);
      for (let i = 0; i < 20; i++) cache.append(positions(seq.k, i, 1), positions(seq.v, i, 1));
      const q = positions(seq.q, 19, 1);
      const before = cache.attend(q, { sinks: SINKS });
      assert.ok(cache.firstPosition > 0);
      const attendErrors = [
        [{ softcap: 0 }, RangeError, /^softcap: expected a finite number > 0, got 0$/],
        [{ softcap: -1 }, RangeError, /^softcap: expected a finite number > 0, got -1$/],
        [{ alibiSlopes: [0.5, 0.25] }, RangeError, /^alibiSlopes: expected 4 numbers \(one per head\), got 2$/],
        [{ alibiSlopes: 'x' }, TypeError, /^alibiSlopes: expected a number\[\] or Float32Array of 4 \(one per head\), got 'x'$/],
        [{ sinks: [0, NaN, 0, 0] }, RangeError, /^sinks\[1\]: expected a finite number, got NaN$/],
        [{ returnLse: 1 }, TypeError, /^returnLse: expected a boolean, got 1$/],
        [{ scale: Infinity }, RangeError, /^scale: expected a finite number/],
        [{ window: [2, 0] }, RangeError, /^window: not an attend\(\) option \(a cache's window is its configuration: new KVCache\(\{ \.\.\., window \}\)\), got Array\(2\)$/],
      ];
      for (const [options, ErrorType, message] of attendErrors) {
        assert.throws(() => cache.attend(q, options), { name: ErrorType.name, message }, JSON.stringify(options));
      }
      // Shapes: k and v carry the K/V heads, q the query heads.
      const t = (shape) => randomTensor(rng, shape);
      assert.throws(() => cache.append(t([1, 4, 1, 8]), t([1, 4, 1, 8])), { name: 'RangeError', message: 'k: expected shape [1, 2, *, 8], got [1, 4, 1, 8]' });
      assert.throws(() => cache.append(t([1, 2, 1, 8]), t([1, 4, 1, 8])), { name: 'RangeError', message: 'v: expected shape [1, 2, 1, 8], got [1, 4, 1, 8]' });
      assert.throws(() => cache.attend(t([1, 2, 1, 8])), { name: 'RangeError', message: 'q: expected shape [1, 4, *, 8], got [1, 2, 1, 8]' });
      // More queries than the window left: the first query's window reaches dropped positions.
      assert.throws(() => cache.attend(positions(seq.q, 10, 10)), { name: 'RangeError', message: /^q: expected at most \d+ queries now: their windows reach back to positions \d+\.\., and the cache holds \d+\.\. \(append before attending again\), got 10$/ });
      assert.throws(() => cache.attend(t([1, 4, 21, 8])), { name: 'RangeError', message: /^q: expected at most length\(\) = 20 queries, got 21/ });
      assert.equal(cache.length, 20);

      // Nothing changed: the same answer, and decoding goes on matching the reference.
      assertClose(cache.attend(q, { sinks: SINKS }).output, before.output, { atol: 0, rtol: 0, label: 'after the errors' });
      cache.dispose();
      decode(attn, config, CHUNKS, { softcap: 1.5, sinks: SINKS }, 7214);
    });
  });
}
