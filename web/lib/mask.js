// Reads the JS mask options (validLens, mask / attnMask, keyPaddingMask, causal, fill) into one
// plain record checked against the score shape [B, nq, nk], and turns that record into the
// MaskArg the wasm side reads. JS owns every mask check: the names and layouts are the JS API's.

import {
  describe, ownRecord, readBoolean, readTensor, shapeString, typedArrayType,
} from './arguments.js';

/** d2l's fill: a fully masked row becomes uniform. The one JS definition of this default. */
export const D2L_FILL = -1e6;
/** PyTorch's fill (MultiHeadAttention): a fully masked row becomes NaN. */
export const PYTORCH_FILL = -Infinity;

const lengthsError = (name, nk, i, value) =>
  `${name}: expected lengths in [0, ${nk}], got ${describe(value)}${i === undefined ? '' : ` at index ${i}`}`;

// validLens: Int32Array | number[] | { data: Int32Array, shape: [B] | [B, nq] }. The lengths
// are copied (they steer which memory the core reads, so no later getter may change them).
function readValidLens(name, value, batch, nq, nk) {
  const shapes = `[${batch}] or [${batch}, ${nq}]`;
  let lengths;
  if (Array.isArray(value)) {
    const count = value.length;
    if (count !== batch && count !== batch * nq) {
      throw new RangeError(`${name}: expected shape ${shapes}, got [${count}]`);
    }
    lengths = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const length = value[i];
      if (typeof length !== 'number') throw new TypeError(lengthsError(name, nk, i, length));
      if (!Number.isInteger(length) || length < 0 || length > nk) throw new RangeError(lengthsError(name, nk, i, length));
      lengths[i] = length;
    }
  } else {
    if (value === null || typeof value !== 'object') {
      throw new TypeError(`${name}: expected an Int32Array or number[] of shape ${shapes}, got ${describe(value)}`);
    }
    const record = readTensor(name, value, { types: ['Int32Array'], bare: true });
    const { shape } = record;
    const bare = typedArrayType(value) !== undefined;
    const fits = bare
      ? record.count === batch || record.count === batch * nq
      : (shape.length === 1 && shape[0] === batch) || (shape.length === 2 && shape[0] === batch && shape[1] === nq);
    if (!fits) throw new RangeError(`${name}: expected shape ${shapes}, got ${shapeString(shape)}`);
    lengths = Int32Array.from(record.data);
    for (const length of lengths) {
      if (length < 0 || length > nk) throw new RangeError(lengthsError(name, nk, undefined, length));
    }
  }
  return ownRecord(name, lengths);
}

// A boolean (Uint8Array, 1 = masked out) or additive (Float32Array) mask of [nq, nk] or
// [batch * heads, nq, nk]; with a head axis (scaled dot-product attention's [B, H, n, d]
// layout), [nq, nk], [batch, nq, nk] (copied for every head) or [batch, heads, nq, nk]. A bare
// typed array is read by its length.
function readScoreMask(name, value, { batch, heads, nq, nk, headAxis }) {
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`${name}: expected a Uint8Array (1 = masked) or Float32Array (added) mask, got ${describe(value)}`);
  }
  const record = readTensor(name, value, { types: ['Uint8Array', 'Float32Array'], bare: true });
  const matrices = batch * heads;
  const accepted = headAxis ? [[nq, nk], [batch, nq, nk], [batch, heads, nq, nk]] : [[nq, nk], [matrices, nq, nk]];
  const bare = typedArrayType(value) !== undefined;
  const shape = bare ? accepted.find((s) => s.reduce((a, b) => a * b, 1) === record.count) : record.shape;
  const fits = shape && accepted.some((s) => s.length === shape.length && s.every((d, i) => d === shape[i]));
  if (!fits) {
    const given = bare ? `${record.count} values` : shapeString(shape);
    const shapes = accepted.map(shapeString);
    throw new RangeError(`${name}: expected shape ${shapes.slice(0, -1).join(', ')} or ${shapes.at(-1)}, got ${given}`);
  }
  if (shape.length === 2) return { record, batch: 1 };
  if (!headAxis || shape.length === 4 || heads === 1) return { record, batch: matrices };
  // [batch, nq, nk] shared by a batch row's heads: the core reads one block per score matrix.
  const block = nq * nk;
  const copied = new record.data.constructor(matrices * block);
  for (let m = 0; m < matrices; m++) {
    const b = Math.floor(m / heads);
    copied.set(record.data.subarray(b * block, (b + 1) * block), m * block);
  }
  return { record: ownRecord(name, copied, [matrices, nq, nk]), batch: matrices };
}

// [B, nk], 1 = padding; a bare Uint8Array of B * nk values is read as that.
function readKeyPadding(name, value, batch, nk) {
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`${name}: expected a Uint8Array of shape [${batch}, ${nk}] (1 = padding), got ${describe(value)}`);
  }
  const record = readTensor(name, value, { types: ['Uint8Array'], bare: true });
  const { shape } = record;
  const fits = shape.length === 1 ? record.count === batch * nk : shape.length === 2 && shape[0] === batch && shape[1] === nk;
  if (!fits) throw new RangeError(`${name}: expected shape [${batch}, ${nk}], got ${shapeString(shape)}`);
  return record;
}

/**
 * The score a masked position gets. float32 must hold it: -1e39 would become -Infinity there and
 * silently turn a fully masked row into NaN. -Infinity itself is allowed (PyTorch's NaN rows);
 * +Infinity and NaN are not (a masked key would outweigh every visible one, or poison the row).
 */
export function readFill(value, fallback) {
  if (value === undefined) return fallback;
  const expected = 'expected a number float32 can hold (|fill| <= 3.4e38) or -Infinity';
  if (typeof value !== 'number') throw new TypeError(`fill: ${expected}, got ${describe(value)}`);
  if (value !== -Infinity && !Number.isFinite(Math.fround(value))) {
    const becomes = Number.isFinite(value) ? `, which float32 turns into ${Math.fround(value)}` : '';
    throw new RangeError(`fill: ${expected}, got ${value}${becomes}`);
  }
  return value;
}

/** The option names readMask reads (pass them to readOptions). */
export const MASK_OPTIONS = ['validLens', 'mask', 'keyPaddingMask', 'causal', 'fill'];

/**
 * options: a record from readOptions with { validLens, mask, keyPaddingMask, causal, fill }
 * (under the JS names; `names` renames them in messages, e.g. mask -> attnMask).
 * heads: score matrices per batch row (multi-head attention), 1 otherwise; headAxis: the masks
 * may have the [B, H, nq, nk] layout (scaled dot-product attention on [B, H, n, d] tensors).
 * Returns { buffers: records to copy in, causal, fill, ... } for maskArg.
 */
export function readMask(options, { batch, nq, nk, heads = 1, names = {}, defaultFill = D2L_FILL, headAxis = false }) {
  const { validLens, mask, keyPaddingMask, causal, fill } = options;
  const record = { validLens: null, scoreMask: null, scoreMaskBatch: 0, keyPadding: null, causal: false, fill: defaultFill };
  if (validLens != null) record.validLens = readValidLens(names.validLens ?? 'validLens', validLens, batch, nq, nk);
  if (mask != null) {
    const read = readScoreMask(names.mask ?? 'mask', mask, { batch, heads, nq, nk, headAxis });
    record.scoreMask = read.record;
    record.scoreMaskBatch = read.batch;
  }
  if (keyPaddingMask != null) record.keyPadding = readKeyPadding(names.keyPaddingMask ?? 'keyPaddingMask', keyPaddingMask, batch, nk);
  if (causal != null) record.causal = readBoolean('causal', causal);
  record.fill = readFill(fill ?? undefined, defaultFill);
  record.buffers = [record.validLens, record.scoreMask, record.keyPadding].filter(Boolean);
  return record;
}

/** The MaskArg value object for the wasm side; copies the mask's buffers into `scope`. */
export function maskArg(scope, mask) {
  const { validLens, scoreMask, keyPadding } = mask;
  const bool = scoreMask?.type === 'Uint8Array';
  // Empty buffers (no keys, no queries) are passed as address 0, which the core reads as "no
  // mask"; there is nothing to mask then anyway.
  return {
    validLens: validLens ? scope.put(validLens) : 0,
    validLensCount: validLens ? validLens.count : 0,
    boolMask: bool ? scope.put(scoreMask) : 0,
    boolMaskBatch: bool ? mask.scoreMaskBatch : 0,
    additive: scoreMask && !bool ? scope.put(scoreMask) : 0,
    additiveBatch: scoreMask && !bool ? mask.scoreMaskBatch : 0,
    keyPadding: keyPadding ? scope.put(keyPadding) : 0,
    causal: mask.causal,
    fill: mask.fill,
  };
}
