// Argument checks for the public API. Every failure is a TypeError (wrong kind of thing) or a
// RangeError (right kind, wrong size or value) whose message names the argument and says what
// was expected and what was given.

const MAX_WASM_BYTES = 2 ** 32;
// Sizes cross into wasm as 32-bit signed ints.
const MAX_SIZE = 2 ** 31 - 1;

export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${value.length})`;
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return `'${value}'`;
  return String(value);
}

export const shapeString = (shape) => `[${shape.map((d) => (d < 0 ? '*' : d)).join(', ')}]`;

export function checkSize(name, value, max = MAX_SIZE) {
  if (typeof value !== 'number') {
    throw new TypeError(`${name}: expected a non-negative integer, got ${describe(value)}`);
  }
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${name}: expected an integer in [0, ${max}], got ${value}`);
  }
  return value;
}

export function checkPositiveInteger(name, value) {
  checkSize(name, value);
  if (value === 0) throw new RangeError(`${name}: expected an integer > 0, got 0`);
  return value;
}

export function checkNumber(name, value, { min = -Infinity, max = Infinity, minOpen = false, maxOpen = false } = {}) {
  if (typeof value !== 'number') {
    throw new TypeError(`${name}: expected a number, got ${describe(value)}`);
  }
  const below = minOpen ? value <= min : value < min;
  const above = maxOpen ? value >= max : value > max;
  if (Number.isNaN(value) || below || above) {
    const range = `${minOpen ? '(' : '['}${min}, ${max}${maxOpen ? ')' : ']'}`;
    throw new RangeError(`${name}: expected a number in ${range}, got ${value}`);
  }
  return value;
}

export function checkBoolean(name, value) {
  if (typeof value !== 'boolean') {
    throw new TypeError(`${name}: expected a boolean, got ${describe(value)}`);
  }
  return value;
}

export function checkChoice(name, value, choices) {
  if (typeof value !== 'string' || !choices.includes(value)) {
    const list = choices.map((c) => `'${c}'`).join(' | ');
    const error = typeof value === 'string' ? RangeError : TypeError;
    throw new error(`${name}: expected ${list}, got ${describe(value)}`);
  }
  return value;
}

// A tensor is { data: TypedArray, shape: number[] }. `expected` lists one size per axis;
// a negative size matches anything. Returns the shape as plain numbers.
export function checkTensor(name, tensor, expected, ArrayType = Float32Array) {
  if (tensor === null || typeof tensor !== 'object' || !('data' in tensor) || !('shape' in tensor)) {
    throw new TypeError(`${name}: expected a tensor { data, shape }, got ${describe(tensor)}`);
  }
  const { data, shape } = tensor;
  if (!(data instanceof ArrayType)) {
    throw new TypeError(`${name}.data: expected ${ArrayType.name}, got ${describe(data)}`);
  }
  if (!Array.isArray(shape)) {
    throw new TypeError(`${name}.shape: expected an array of sizes, got ${describe(shape)}`);
  }
  // Sizes are first checked as integers only, so that a shape that disagrees with its data is
  // reported as such; the 32-bit limit of wasm comes after.
  shape.forEach((size, axis) => checkSize(`${name}.shape[${axis}]`, size, Number.MAX_SAFE_INTEGER));
  if (expected) {
    const fits = shape.length === expected.length && expected.every((e, i) => e < 0 || e === shape[i]);
    if (!fits) {
      throw new RangeError(`${name}: expected shape ${shapeString(expected)}, got ${shapeString(shape)}`);
    }
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== data.length) {
    throw new RangeError(
      `${name}: shape ${shapeString(shape)} holds ${count} values, but data has ${data.length}`,
    );
  }
  shape.forEach((size, axis) => checkSize(`${name}.shape[${axis}]`, size));
  return shape;
}

// Rejects results that could not fit in wasm's 32-bit memory before anything is allocated.
export function checkAllocation(name, shape, bytesPerValue = 4) {
  const bytes = shape.reduce((a, b) => a * b, bytesPerValue);
  if (bytes >= MAX_WASM_BYTES) {
    const gib = (bytes / 2 ** 30).toFixed(1);
    throw new RangeError(
      `${name}: shape ${shapeString(shape)} needs ${gib} GiB, more than wasm's 4 GiB memory`,
    );
  }
}

export const tensor = (data, shape) => ({ data, shape });
