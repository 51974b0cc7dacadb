// What scaled dot-product attention reads beyond d2l's options: q, k, v in the heads layout
// [B, H, n, d] with grouped K/V heads, and the score modifiers of current models (window,
// softcap, alibiSlopes, sinks). They cross into the core as the heads and modifier fields of its
// AttentionArg; the formulas are documented in index.d.ts and cpp/include/attn/attention.hpp.

import {
  MAX_SIZE, describe, ownRecord, readFloat32, readTensor, shapeString, typedArrayType,
} from './arguments.js';

/** The option names readModifiers reads. */
export const MODIFIER_OPTIONS = ['window', 'softcap', 'alibiSlopes', 'sinks'];

/** The AttentionArg fields of a call without heads or modifiers (3-D, additive attention). */
export const NO_MODIFIERS = Object.freeze({
  heads: 1, kvHeads: 1, windowLeft: -1, windowRight: -1, softcap: 0, alibiSlopes: 0, sinks: 0,
});

// A [B, n, d] or [B, H, n, d] tensor: its record.
const readAttentionInput = (name, value) => {
  const record = readTensor(name, value);
  const rank = record.shape.length;
  if (rank !== 3 && rank !== 4) {
    throw new RangeError(`${name}: expected shape [B, n, d] or [B, H, n, d], got ${shapeString(record.shape)}`);
  }
  return record;
};

/**
 * q, k, v of scaled dot-product attention, 3-D [B, n, d] or all 4-D [B, H, n, d] with k and v
 * of Hkv heads, H a multiple of Hkv. Returns their records with the shapes the core reads
 * ([B * H, n, d]), the heads, and `lead`, the leading axes of every result ([B] or [B, H]).
 */
export function readHeads(q, k, v) {
  const qr = readAttentionInput('q', q);
  const kr = readAttentionInput('k', k);
  const vr = readAttentionInput('v', v);
  const rank = qr.shape.length;
  for (const r of [kr, vr]) {
    if (r.shape.length !== rank) {
      throw new RangeError(`${r.name}: expected ${rank} axes as q has (${shapeString(qr.shape)}), got ${shapeString(r.shape)}`);
    }
  }
  if (rank === 3) return { qr, kr, vr, heads: 1, kvHeads: 1, lead: [qr.shape[0]] };
  const [batch, heads] = qr.shape;
  const kvHeads = kr.shape[1];
  if (kr.shape[0] !== batch || kvHeads === 0 || heads % kvHeads !== 0) {
    throw new RangeError(`k: expected shape [${batch}, Hkv, nk, d] with Hkv dividing q's ${heads} heads, got ${shapeString(kr.shape)}`);
  }
  if (vr.shape[0] !== batch || vr.shape[1] !== kvHeads) {
    throw new RangeError(`v: expected shape [${batch}, ${kvHeads}, nk, dv] (k's batch and heads), got ${shapeString(vr.shape)}`);
  }
  const flat = (r) => ({ ...r, shape: [r.shape[0] * r.shape[1], r.shape[2], r.shape[3]] });
  return { qr: flat(qr), kr: flat(kr), vr: flat(vr), heads, kvHeads, lead: [batch, heads], shapes: [qr, kr, vr].map((r) => r.shape) };
}

// [left, right]: integers >= -1 (-1: unbounded on that side).
function readWindow(value) {
  const expected = 'expected [left, right] with integers >= -1 (-1: unbounded on that side)';
  if (!Array.isArray(value) || value.length !== 2) {
    throw new TypeError(`window: ${expected}, got ${describe(value)}`);
  }
  const sides = [value[0], value[1]];
  sides.forEach((side, i) => {
    if (typeof side !== 'number') throw new TypeError(`window[${i}]: ${expected}, got ${describe(side)}`);
    if (!Number.isInteger(side) || side < -1 || side > MAX_SIZE) {
      throw new RangeError(`window[${i}]: ${expected}, got ${side}`);
    }
  });
  return sides;
}

// One finite float32 per head, from a number[] or a Float32Array.
function readPerHead(name, value, heads) {
  let list;
  if (Array.isArray(value)) {
    list = [];
    for (let i = 0; i < Math.min(value.length, MAX_SIZE); i++) list.push(value[i]);
  } else if (typedArrayType(value) === 'Float32Array') {
    list = Array.from(readTensor(name, value, { bare: true }).data);
  } else {
    throw new TypeError(`${name}: expected a number[] or Float32Array of ${heads} (one per head), got ${describe(value)}`);
  }
  if (list.length !== heads) throw new RangeError(`${name}: expected ${heads} numbers (one per head), got ${list.length}`);
  const data = Float32Array.from(list, (x, i) => {
    readFloat32(`${name}[${i}]`, x);
    if (!Number.isFinite(x)) throw new RangeError(`${name}[${i}]: expected a finite number, got ${x}`);
    return x;
  });
  return ownRecord(name, data);
}

/**
 * The modifiers of an options record (from readOptions with MODIFIER_OPTIONS), checked against
 * the query heads: { window, softcap, alibiSlopes, sinks } with the per-head lists as records.
 */
export function readModifiers(o, heads) {
  const modifiers = { window: [-1, -1], softcap: 0, alibiSlopes: null, sinks: null };
  if (o.window != null) modifiers.window = readWindow(o.window);
  if (o.softcap != null) {
    readFloat32('softcap', o.softcap);
    if (!(o.softcap > 0 && Number.isFinite(o.softcap))) {
      throw new RangeError(`softcap: expected a finite number > 0, got ${o.softcap}`);
    }
    modifiers.softcap = o.softcap;
  }
  if (o.alibiSlopes != null) modifiers.alibiSlopes = readPerHead('alibiSlopes', o.alibiSlopes, heads);
  if (o.sinks != null) modifiers.sinks = readPerHead('sinks', o.sinks, heads);
  return modifiers;
}

/** The records readModifiers made, for the heap. */
export const modifierBuffers = (m) => [m.alibiSlopes, m.sinks].filter(Boolean);

/** The heads and modifier fields of the AttentionArg; copies the per-head lists into `scope`. */
export function modifiersArg(scope, heads, kvHeads, m) {
  return {
    heads,
    kvHeads,
    windowLeft: m.window[0],
    windowRight: m.window[1],
    softcap: m.softcap,
    alibiSlopes: m.alibiSlopes ? scope.put(m.alibiSlopes) : 0,
    sinks: m.sinks ? scope.put(m.sinks) : 0,
  };
}
