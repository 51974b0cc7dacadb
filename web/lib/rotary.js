// Rotary position embeddings (RoPE): attn.applyRotary and attn.applyRotaryBackward, the steps of
// functions.js (read the arguments once, copy into the heap, call the core, copy out). JS owns
// every check here, since the options are the API's own: x's rank, positions (shape, integers
// >= 0), offset, base, dim against d, interleaved; from JS the core's checks of the same cannot
// fail. The core turns x in place in the heap (its buffer becomes the result).

import {
  MAX_SIZE, describe, ownRecord, readBoolean, readFloat32, readOptions, readSize, readTensor, shapeString,
  typedArrayType,
} from './arguments.js';
import { check, output, withHeap } from './heap.js';

const ROTARY_OPTIONS = ['positions', 'offset', 'base', 'dim', 'interleaved'];

// x (or gradOutput): [B, n, d], or [B, H, n, d] whose B * H matrices [n, d] the core reads as a
// batch with H heads per batch row.
function readRotaryInput(name, value) {
  const record = readTensor(name, value);
  const { shape } = record;
  if (shape.length !== 3 && shape.length !== 4) {
    throw new RangeError(`${name}: expected shape [B, n, d] or [B, H, n, d], got ${shapeString(shape)}`);
  }
  const heads = shape.length === 4 ? shape[1] : 1;
  const matrices = shape[0] * heads;
  if (matrices > MAX_SIZE) {
    throw new RangeError(`${name}: expected B * H <= ${MAX_SIZE} matrices, got ${shape[0]} * ${heads} = ${matrices}`);
  }
  const [n, d] = shape.slice(-2);
  return { name, record, batch: shape[0], heads, n, d, matrices };
}

const positionError = (i, value) => `positions: expected integers in [0, ${MAX_SIZE}], got ${describe(value)}${i === undefined ? '' : ` at index ${i}`}`;

// positions: Int32Array | number[] of n entries, or { data: Int32Array, shape: [n] | [B, n] };
// copied (the core reads them after every other argument), each an integer >= 0.
function readPositions(value, batch, n) {
  const shapes = `[${n}] or [${batch}, ${n}]`;
  let positions;
  if (Array.isArray(value)) {
    const count = value.length;
    if (count !== n) {
      throw new RangeError(`positions: expected ${n} entries (an array is [n]; a tensor of shape [${batch}, ${n}] gives each batch row its own), got ${count}`);
    }
    positions = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const position = value[i];
      if (typeof position !== 'number') throw new TypeError(positionError(i, position));
      if (!Number.isInteger(position) || position < 0 || position > MAX_SIZE) throw new RangeError(positionError(i, position));
      positions[i] = position;
    }
  } else {
    if (value === null || typeof value !== 'object') {
      throw new TypeError(`positions: expected an Int32Array or number[] of ${n} entries, or a tensor { data: Int32Array, shape: ${shapes} }, got ${describe(value)}`);
    }
    const record = readTensor('positions', value, { types: ['Int32Array'], bare: true });
    const { shape } = record;
    const fits = typedArrayType(value) !== undefined
      ? record.count === n
      : (shape.length === 1 && shape[0] === n) || (shape.length === 2 && shape[0] === batch && shape[1] === n);
    if (!fits) throw new RangeError(`positions: expected shape ${shapes}, got ${shapeString(shape)}`);
    positions = Int32Array.from(record.data);
    const negative = positions.findIndex((p) => p < 0);
    if (negative >= 0) throw new RangeError(positionError(negative, positions[negative]));
  }
  return ownRecord('positions', positions);
}

// dim: an even count of features in [2, d] (0 when d is 0), default d.
function readDim(value, name, d) {
  const expected = d === 0 ? '0 (d = 0)' : `an even number in [2, ${d}]`;
  if (d === 1) throw new RangeError(`dim: expected an even number in [2, d], but ${name} has d = 1: no pair of features to rotate`);
  if (value === undefined) {
    if (d % 2 === 0) return d;
    throw new RangeError(`dim: expected ${expected} (the default, d = ${d}, is odd: pass dim), got undefined`);
  }
  readSize('dim', value);
  if (value % 2 !== 0 || value > d || (value === 0 && d > 0)) throw new RangeError(`dim: expected ${expected}, got ${value}`);
  return value;
}

function readRotaryOptions(options, input) {
  const o = readOptions('options', options, ROTARY_OPTIONS);
  const positions = o.positions === undefined ? null : readPositions(o.positions, input.batch, input.n);
  const offset = readSize('offset', o.offset ?? 0);
  const base = readFloat32('base', o.base, 10000);
  if (!(base > 0 && base < Infinity)) throw new RangeError(`base: expected a finite number > 0, got ${base}`);
  const dim = readDim(o.dim, input.name, input.d);
  const interleaved = readBoolean('interleaved', o.interleaved, false);
  return { positions, offset, base, dim, interleaved };
}

export function createRotary(module) {
  function rotary(name, x, options, backward) {
    const input = readRotaryInput(name, x);
    const settings = readRotaryOptions(options, input);
    const { record } = input;
    const { positions } = settings;
    return withHeap(module, [record, positions].filter(Boolean), (scope) => {
      // In place: the result takes x's buffer in the heap.
      const pointer = scope.put(record);
      const tensor = { data: pointer, batch: input.matrices, rows: input.n, cols: input.d };
      check(module.applyRotary(
        tensor, input.heads, positions ? scope.put(positions) : 0, positions ? positions.count : 0,
        settings.offset, settings.base, settings.dim, settings.interleaved, backward, tensor,
      ));
      return scope.take(pointer, output(backward ? 'dx' : 'output', record.shape));
    });
  }

  const applyRotary = (x, options) => rotary('x', x, options, false);
  const applyRotaryBackward = (gradOutput, options) => rotary('gradOutput', gradOutput, options, true);
  return { applyRotary, applyRotaryBackward };
}
