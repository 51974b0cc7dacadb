// Reads the caller's arguments, each exactly once, into plain records the rest of the JS layer
// works on; nothing after this module touches a caller's object again, so a getter, a Proxy
// trap or an overridden method that answers differently the second time cannot change what the
// core computes on. Every failure is a TypeError (wrong kind of thing) or a RangeError (right
// kind, wrong size or value) whose message names the argument and says expected vs given.
//
// Which side owns which check (each check has one owner):
// - here, in JS: the type of every argument; each tensor on its own (rank, sizes as integers
//   that fit an int32, data length = product of the shape: the core receives raw pointers, so
//   this is memory safety); numbers that cross as float32 being representable there; scalar
//   options the core cannot name as the user does (seed, scale's default, fill, validLens,
//   masks, keyPaddingMask, bandwidths[i], the MultiHeadAttention config and state dict); and
//   the heap limit (heap.js), checked before anything is allocated.
// - the C++ core: how arguments relate to each other (batches, widths and rows of q, k, v, W,
//   Wq, Wk, b, keys, values, queries, query, key, value), the names it parses (fn, kernel) and
//   the ranges it documents with the same names (dropout, bandwidth). Its messages name the
//   argument as the JS user does; heap.js maps its errors to RangeError.
// The core also validates masks and configurations for its native callers; from JS those
// checks cannot fail, because the records handed over have been checked here first.

// Sizes cross into wasm as 32-bit signed ints.
export const MAX_SIZE = 2 ** 31 - 1;
// More axes than any function here takes; bounds the loop over a hostile shape's length.
const MAX_RANK = 32;

// The engine's own accessors: they read the internal slots of a genuine typed array (of any
// realm or subclass) and cannot be overridden by the value itself. The Symbol.toStringTag
// getter returns the type name, and undefined for anything that is not a typed array
// (including a Proxy and an object that only inherits from Float32Array.prototype).
const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const intrinsic = (key) => Object.getOwnPropertyDescriptor(TypedArrayPrototype, key).get;
const tagOf = intrinsic(Symbol.toStringTag);
const bufferOf = intrinsic('buffer');
const byteOffsetOf = intrinsic('byteOffset');
const lengthOf = intrinsic('length');

// ArrayBuffer's own byteLength getter: it answers for a genuine ArrayBuffer of any realm
// (detached ones included) and throws for anything else, a Proxy or an object inheriting
// ArrayBuffer.prototype among them.
const arrayBufferByteLengthOf = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;

const ARRAY_TYPES = { Float32Array, Int32Array, Uint8Array };

/** The type name of a genuine typed array ('Float32Array', ...), else undefined. */
export const typedArrayType = (value) => tagOf.call(value);

/** The number of elements of a genuine typed array, read from its internal slot. */
export const typedArrayLength = (value) => lengthOf.call(value);

/** A short description of what was given, for error messages. Never throws. */
export function describe(value) {
  switch (typeof value) {
    case 'string':
      return `'${value.length > 40 ? `${value.slice(0, 40)}...` : value}'`;
    case 'bigint':
      return `a BigInt (${value}n)`;
    case 'symbol':
      return 'a symbol';
    case 'function':
      return 'a function';
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value === null) return 'null';
  const type = typedArrayType(value);
  if (type) return `${type}(${typedArrayLength(value)})`;
  try {
    if (Array.isArray(value)) return `Array(${value.length})`;
    const name = value.constructor?.name;
    // Something that looks like a typed array without being one: a Proxy, or an object whose
    // prototype is a typed array's.
    if (typeof name === 'string' && /^(Float|Int|Uint|BigInt|BigUint)\d+(Clamped)?Array$/.test(name)) {
      return `an object posing as a ${name} (a Proxy or a non-typed-array inheriting its prototype)`;
    }
    return typeof name === 'string' && name ? name : 'object';
  } catch {
    return 'object';
  }
}

export const shapeString = (shape) => `[${shape.map((d) => (d < 0 ? '*' : d)).join(', ')}]`;

/** A size: an integer in [0, max]. */
export function readSize(name, value, max = MAX_SIZE) {
  if (typeof value !== 'number') {
    throw new TypeError(`${name}: expected a non-negative integer, got ${describe(value)}`);
  }
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${name}: expected an integer in [0, ${max}], got ${value}`);
  }
  return value;
}

export function readPositiveInteger(name, value) {
  readSize(name, value);
  if (value === 0) throw new RangeError(`${name}: expected an integer > 0, got 0`);
  return value;
}

export function readBoolean(name, value, fallback) {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new TypeError(`${name}: expected a boolean, got ${describe(value)}`);
  }
  return value;
}

/** A string the core parses (fn, kernel): only its type is checked here. */
export function readString(name, value, fallback, choices) {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') {
    throw new TypeError(`${name}: expected ${choices.map((c) => `'${c}'`).join(' | ')}, got ${describe(value)}`);
  }
  return value;
}

/**
 * A number that crosses into the core as a float32. A finite number that float32 cannot hold
 * (1e39 would become Infinity, 1e-50 zero) is a RangeError here; NaN and the infinities pass,
 * for the core's range check (or the caller's) to judge.
 */
export function readFloat32(name, value, fallback) {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number') {
    throw new TypeError(`${name}: expected a number, got ${describe(value)}`);
  }
  const single = Math.fround(value);
  if (Number.isFinite(value) && (!Number.isFinite(single) || (single === 0 && value !== 0))) {
    throw new RangeError(`${name}: expected a number float32 can hold (|x| <= 3.4e38, and 0 only if given as 0), got ${value}, which float32 turns into ${single}`);
  }
  return value;
}

/**
 * An options object, read once: each listed property is read exactly once into a plain object.
 * undefined means no options, unless `required`.
 */
export function readOptions(name, value, keys, { required = false } = {}) {
  const record = {};
  if (value === undefined && !required) return record;
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`${name}: expected an options object, got ${describe(value)}`);
  }
  for (const key of keys) record[key] = value[key];
  return record;
}

// The shape, copied element by element into fresh integers. Its elements are read once each by
// index: no method of the caller's array runs.
function readShape(name, shape) {
  if (!Array.isArray(shape)) {
    throw new TypeError(`${name}.shape: expected an array of sizes, got ${describe(shape)}`);
  }
  const rank = shape.length;
  if (!(rank <= MAX_RANK)) throw new RangeError(`${name}.shape: expected at most ${MAX_RANK} axes, got ${rank}`);
  const copy = [];
  // Sizes are first checked as integers only, so that a shape that disagrees with its data is
  // reported as such; the 32-bit limit of wasm comes after.
  for (let axis = 0; axis < rank; axis++) {
    copy.push(readSize(`${name}.shape[${axis}]`, shape[axis], Number.MAX_SAFE_INTEGER));
  }
  return copy;
}

// A fresh view of the caller's typed array, built from its internal slots: a plain array of
// this realm over the same memory, which no subclass or own property can make lie.
function readView(name, data, types) {
  const type = typedArrayType(data);
  if (!types.includes(type)) {
    throw new TypeError(`${name}: expected ${types.join(' or ')}, got ${describe(data)}`);
  }
  try {
    return new ARRAY_TYPES[type](bufferOf.call(data), byteOffsetOf.call(data), lengthOf.call(data));
  } catch {
    throw new TypeError(`${name}: the ${type}'s buffer is detached (transferred or freed); pass an array whose memory is still there`);
  }
}

/**
 * Bytes given as a Uint8Array or an ArrayBuffer (of any realm): read once into a plain
 * Uint8Array of this realm over the same memory.
 */
export function readBytes(name, value) {
  if (typedArrayType(value) === 'Uint8Array') return readView(name, value, ['Uint8Array']);
  try {
    arrayBufferByteLengthOf.call(value);
  } catch {
    throw new TypeError(`${name}: expected a Uint8Array or ArrayBuffer, got ${describe(value)}`);
  }
  try {
    return new Uint8Array(value);
  } catch {
    throw new TypeError(`${name}: the ArrayBuffer is detached (transferred or freed); pass a buffer whose memory is still there`);
  }
}

/**
 * A tensor { data, shape }, or a bare typed array when `bare` is set (shape [length]): read
 * once into { name, type, data, shape, count }. `types` lists the accepted typed-array types;
 * `expected` gives one size per axis (negative = any), checked here only where it is this
 * tensor's own business (its rank, or sizes no other argument decides).
 */
export function readTensor(name, value, { types = ['Float32Array'], expected, bare = false } = {}) {
  let data;
  let shape;
  if (bare && typedArrayType(value) !== undefined) {
    data = readView(name, value, types);
    shape = [typedArrayLength(data)];
  } else {
    if (value === null || typeof value !== 'object' || typedArrayType(value) !== undefined || (bare && Array.isArray(value))) {
      const expected = bare ? `a ${types.join(' or ')} or a tensor { data, shape }` : 'a tensor { data, shape }';
      throw new TypeError(`${name}: expected ${expected}, got ${describe(value)}`);
    }
    data = readView(`${name}.data`, value.data, types);
    shape = readShape(name, value.shape);
  }
  const type = typedArrayType(data);
  if (expected) {
    const fits = shape.length === expected.length && expected.every((e, i) => e < 0 || e === shape[i]);
    if (!fits) throw new RangeError(`${name}: expected shape ${shapeString(expected)}, got ${shapeString(shape)}`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  const length = typedArrayLength(data);
  if (count !== length) {
    throw new RangeError(`${name}: shape ${shapeString(shape)} holds ${count} values, but data has ${length}`);
  }
  shape.forEach((size, axis) => readSize(`${name}.shape[${axis}]`, size));
  return { name, type, data, shape, count };
}

/** A record for an array this layer made itself (already plain and checked). */
export const ownRecord = (name, data, shape = [data.length]) => ({
  name, type: typedArrayType(data), data, shape, count: data.length,
});

/** A tensor of rank 3 [B, n, d]: its record and its three sizes. */
export const readBatch = (name, value) => readTensor(name, value, { expected: [-1, -1, -1] });
