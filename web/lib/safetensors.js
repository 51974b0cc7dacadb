// Reads the .safetensors format (https://github.com/huggingface/safetensors#format): an 8-byte
// little-endian header length N, N bytes of UTF-8 JSON starting with '{' (space padding after it
// allowed): { name: { dtype, shape, data_offsets: [begin, end] }, __metadata__?: { string: string } },
// then the raw little-endian tensor bytes. Float tensors come back as Float32Array (so PyTorch
// weights in f16/bf16/f64 load too); I32 as Int32Array; U8 and BOOL as Uint8Array.
//
// Everything the format forbids is rejected, as the reference parser (the Rust crate's
// `SafeTensors::read_metadata` + `Metadata::validate`) does: invalid UTF-8, duplicate keys,
// non-string metadata, and data_offsets that, sorted, do not tile the data section exactly from
// its first byte to its last (an overlap, a gap or trailing bytes could hide a second payload).

import { describe, readBytes } from './arguments.js';

const MAX_HEADER_BYTES = 100_000_000; // the reference parser's MAX_HEADER_SIZE

// A Map, so that a dtype such as 'toString' or '__proto__' finds nothing, like any other
// unsupported dtype, instead of a property of Object.prototype.
const DTYPES = new Map([
  ['F32', { bytes: 4, read: (view, offset) => view.getFloat32(offset, true), Array: Float32Array }],
  ['F64', { bytes: 8, read: (view, offset) => view.getFloat64(offset, true), Array: Float32Array }],
  ['F16', { bytes: 2, read: (view, offset) => halfToFloat(view.getUint16(offset, true)), Array: Float32Array }],
  ['BF16', { bytes: 2, read: (view, offset) => bfloat16ToFloat(view.getUint16(offset, true)), Array: Float32Array }],
  ['I32', { bytes: 4, read: (view, offset) => view.getInt32(offset, true), Array: Int32Array }],
  ['U8', { bytes: 1, read: (view, offset) => view.getUint8(offset), Array: Uint8Array }],
  ['BOOL', { bytes: 1, read: (view, offset) => view.getUint8(offset), Array: Uint8Array }],
]);

const scratch = new DataView(new ArrayBuffer(4));
function bfloat16ToFloat(bits) {
  scratch.setUint32(0, bits << 16);
  return scratch.getFloat32(0);
}

function halfToFloat(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function malformed(detail) {
  return new RangeError(`bytes: not a valid .safetensors file: ${detail}`);
}

/** A tensor name for a message: quoted, and cut short if a hostile file made it huge. */
const quote = (name) => `'${name.length > 80 ? `${name.slice(0, 80)}...` : name}'`;

const json = (value) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
};

const isRecord = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The header: N bytes of valid UTF-8 that start with '{'; the data section starts after it. */
function readHeaderText(bytes, view) {
  if (bytes.length < 8) throw malformed(`expected at least 8 bytes, got ${bytes.length}`);
  const declared = view.getBigUint64(0, true);
  if (declared > BigInt(MAX_HEADER_BYTES)) {
    throw malformed(`header length ${declared} exceeds the format's limit of ${MAX_HEADER_BYTES} bytes`);
  }
  const length = Number(declared);
  if (8 + length > bytes.length) {
    throw malformed(`header length ${length} exceeds the ${bytes.length - 8} bytes after it`);
  }
  const header = bytes.subarray(8, 8 + length);
  if (header[0] !== 0x7b) {
    throw malformed(`the header must be a JSON object starting with '{', got ${length === 0 ? 'an empty header' : `byte 0x${header[0].toString(16)} first`}`);
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(header);
  } catch {
    throw malformed('the header is not valid UTF-8');
  }
  return { text, dataStart: 8 + length };
}

// JSON.parse keeps the last of duplicate keys without a word; the format forbids duplicates.
// In valid JSON each key is followed by exactly one ':' outside strings, and no other ':' is, so
// the text has a duplicate key exactly when it has more such colons than the parsed value has keys.
function colonsOutsideStrings(text) {
  let colons = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x3a) {
      colons++;
    }
  }
  return colons;
}

function keyCount(value) {
  let count = 0;
  const pending = [value]; // a stack, not recursion: a hostile header may nest deeply
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === null || typeof next !== 'object') continue;
    if (!Array.isArray(next)) count += Object.keys(next).length;
    for (const child of Object.values(next)) pending.push(child);
  }
  return count;
}

function parseHeader(text) {
  let header;
  try {
    header = JSON.parse(text);
  } catch (error) {
    throw malformed(`the header is not JSON (${error.message})`);
  }
  if (!isRecord(header)) throw malformed('the header is not a JSON object');
  if (colonsOutsideStrings(text) !== keyCount(header)) throw malformed('the header has a duplicate key');
  if (Object.hasOwn(header, '__metadata__')) {
    const metadata = header.__metadata__;
    if (!isRecord(metadata)) throw malformed(`__metadata__ must be an object of strings, got ${json(metadata)}`);
    for (const [key, value] of Object.entries(metadata)) {
      if (typeof value !== 'string') throw malformed(`__metadata__ must map strings to strings, got ${quote(key)}: ${json(value)}`);
    }
  }
  return header;
}

const isSize = (x) => Number.isSafeInteger(x) && x >= 0;

/** One header entry checked on its own: { name, type, shape, count, begin, end }. */
function tensorEntry(name, entry) {
  const what = `tensor ${quote(name)}`;
  if (!isRecord(entry)) throw malformed(`${what} must be an object { dtype, shape, data_offsets }, got ${json(entry)}`);
  const { dtype, shape, data_offsets: offsets } = entry;
  const type = DTYPES.get(dtype);
  if (!type) {
    throw new TypeError(`bytes: ${what} has unsupported dtype ${typeof dtype === 'string' ? quote(dtype) : describe(dtype)}; supported: ${[...DTYPES.keys()].join(', ')}`);
  }
  if (!Array.isArray(shape) || !shape.every(isSize)) {
    throw malformed(`${what} has shape ${json(shape)}, expected an array of non-negative integers`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (!isSize(count * type.bytes)) throw malformed(`${what} has shape ${json(shape)}, more elements than any file holds`);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isSize) || offsets[1] < offsets[0]) {
    throw malformed(`${what} has data_offsets ${json(offsets)}, expected [begin, end] with 0 <= begin <= end`);
  }
  const [begin, end] = offsets;
  if (end - begin !== count * type.bytes) {
    throw malformed(`${what} (${dtype} ${json(shape)}) needs ${count * type.bytes} bytes, but its data_offsets ${json(offsets)} span ${end - begin}`);
  }
  return { name, type, shape, count, begin, end };
}

/** Sorted by offsets, the tensors must tile [0, dataLength) with no overlap, gap or remainder. */
function checkTiling(tensors, dataLength) {
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = 0;
  let previous = null;
  for (const t of tensors) {
    if (t.begin < covered) {
      throw malformed(`tensor ${quote(t.name)} (data_offsets [${t.begin}, ${t.end}]) overlaps tensor ${quote(previous.name)} (data_offsets [${previous.begin}, ${previous.end}])`);
    }
    if (t.begin > covered) {
      throw malformed(`data bytes [${covered}, ${t.begin}) belong to no tensor (the next is tensor ${quote(t.name)} at data_offsets [${t.begin}, ${t.end}])`);
    }
    if (t.end > dataLength) {
      throw malformed(`tensor ${quote(t.name)} has data_offsets [${t.begin}, ${t.end}] past the end of the ${dataLength} data bytes`);
    }
    covered = t.end;
    previous = t;
  }
  if (covered !== dataLength) {
    throw malformed(`data bytes [${covered}, ${dataLength}) belong to no tensor (the tensors cover ${covered} of ${dataLength} data bytes)`);
  }
}

/**
 * The tensors of a .safetensors file, by name, in an object with a null prototype: a tensor
 * named `__proto__` or `toString` is an ordinary key.
 */
export function readSafetensors(bytes) {
  bytes = readBytes('bytes', bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const { text, dataStart } = readHeaderText(bytes, view);
  const header = parseHeader(text);
  const entries = Object.entries(header).filter(([name]) => name !== '__metadata__');
  const tensors = entries.map(([name, entry]) => tensorEntry(name, entry));
  checkTiling([...tensors], bytes.length - dataStart);

  const result = Object.create(null);
  for (const { name, type, shape, count, begin } of tensors) {
    const data = new type.Array(count);
    for (let i = 0; i < count; i++) data[i] = type.read(view, dataStart + begin + i * type.bytes);
    result[name] = { data, shape: [...shape] };
  }
  return result;
}
