// Turns the JS mask options (validLens, mask / attnMask, keyPaddingMask, causal, fill) into the
// MaskArg the wasm side reads, after checking each against the score shape [B, nq, nk].

import { checkBoolean, checkTensor, describe, shapeString } from './tensor.js';

// validLens: Int32Array | number[] | { data: Int32Array, shape: [B] | [B, nq] }.
function toValidLens(name, value, batch, nq, nk) {
  let data = value;
  if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value) && !Array.isArray(value)) {
    const shape = checkTensor(name, value, null, Int32Array);
    const accepted = shape.length === 1 ? shape[0] === batch : shape.length === 2 && shape[0] === batch && shape[1] === nq;
    if (!accepted) {
      throw new RangeError(`${name}: expected shape [${batch}] or [${batch}, ${nq}], got ${shapeString(shape)}`);
    }
    data = value.data;
  }
  if (Array.isArray(data)) data = Int32Array.from(data, (x) => checkLength(name, x, nk));
  if (!(data instanceof Int32Array)) {
    throw new TypeError(`${name}: expected an Int32Array of shape [${batch}] or [${batch}, ${nq}], got ${describe(value)}`);
  }
  if (data.length !== batch && data.length !== batch * nq) {
    throw new RangeError(
      `${name}: expected shape [${batch}] or [${batch}, ${nq}], got [${data.length}]`,
    );
  }
  data.forEach((length) => checkLength(name, length, nk));
  return data;
}

function checkLength(name, length, nk) {
  if (!Number.isInteger(length) || length < 0 || length > nk) {
    throw new RangeError(`${name}: expected lengths in [0, ${nk}], got ${length}`);
  }
  return length;
}

// A boolean (Uint8Array, 1 = masked out) or additive (Float32Array) mask of [nq, nk] or
// [matrices, nq, nk]; a bare typed array is read by its length.
function toScoreMask(name, value, matrices, nq, nk) {
  const data = ArrayBuffer.isView(value) ? value : value?.data;
  if (!(data instanceof Uint8Array || data instanceof Float32Array)) {
    throw new TypeError(`${name}: expected a Uint8Array (1 = masked) or Float32Array (added) mask, got ${describe(value)}`);
  }
  const accepted = [[nq, nk], [matrices, nq, nk]];
  const shape = ArrayBuffer.isView(value)
    ? accepted.find((s) => s.reduce((a, b) => a * b, 1) === data.length)
    : checkTensor(name, value, null, data.constructor);
  const fits = shape && accepted.some((s) => s.length === shape.length && s.every((d, i) => d === shape[i]));
  if (!fits) {
    const given = shape ? shapeString(shape) : `${data.length} values`;
    throw new RangeError(`${name}: expected shape ${shapeString(accepted[0])} or ${shapeString(accepted[1])}, got ${given}`);
  }
  return { data, batch: shape.length === 2 ? 1 : matrices };
}

function toKeyPadding(name, value, batch, nk) {
  const data = ArrayBuffer.isView(value) ? value : value?.data;
  if (!(data instanceof Uint8Array)) {
    throw new TypeError(`${name}: expected a Uint8Array of shape [${batch}, ${nk}] (1 = padding), got ${describe(value)}`);
  }
  const shape = ArrayBuffer.isView(value) ? [data.length] : checkTensor(name, value, null, Uint8Array);
  if (data.length !== batch * nk || (shape.length === 2 && (shape[0] !== batch || shape[1] !== nk))) {
    throw new RangeError(`${name}: expected shape [${batch}, ${nk}], got ${shapeString(shape)}`);
  }
  return data;
}

// options: { validLens, mask, keyPaddingMask, causal, fill } under the caller's names.
// heads: score matrices per batch row (multi-head attention), 1 otherwise.
export function prepareMask(scope, options, { batch, nq, nk, heads = 1, names = {}, defaultFill = -1e6 }) {
  const arg = {
    validLens: 0, validLensCount: 0, boolMask: 0, boolMaskBatch: 0, additive: 0,
    additiveBatch: 0, keyPadding: 0, causal: false, fill: defaultFill,
  };
  const { validLens, mask, keyPaddingMask, causal, fill } = options;
  if (validLens != null) {
    const lens = toValidLens(names.validLens ?? 'validLens', validLens, batch, nq, nk);
    arg.validLens = scope.put(lens);
    arg.validLensCount = lens.length;
  }
  if (mask != null) {
    const { data, batch: maskBatch } = toScoreMask(names.mask ?? 'mask', mask, batch * heads, nq, nk);
    if (data instanceof Uint8Array) {
      arg.boolMask = scope.put(data);
      arg.boolMaskBatch = maskBatch;
    } else {
      arg.additive = scope.put(data);
      arg.additiveBatch = maskBatch;
    }
  }
  if (keyPaddingMask != null) {
    arg.keyPadding = scope.put(toKeyPadding(names.keyPaddingMask ?? 'keyPaddingMask', keyPaddingMask, batch, nk));
  }
  if (causal != null) arg.causal = checkBoolean('causal', causal);
  if (fill != null) {
    if (typeof fill !== 'number') throw new TypeError(`fill: expected a number or -Infinity, got ${describe(fill)}`);
    if (Number.isNaN(fill)) throw new RangeError('fill: expected a number or -Infinity, got NaN');
    arg.fill = fill;
  }
  // Empty buffers (no keys, no queries) are passed as address 0, which the core reads as "no
  // mask"; there is nothing to mask then anyway.
  return arg;
}

