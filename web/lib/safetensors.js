// Reads the .safetensors format: an 8-byte little-endian header length N, N bytes of JSON
// ({ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__? }), then the raw
// little-endian tensor bytes. Float tensors come back as Float32Array (so PyTorch weights in
// f16/bf16/f64 load too); I32 as Int32Array; U8 and BOOL as Uint8Array.

import { describe } from './tensor.js';

const MAX_HEADER_BYTES = 100 * 2 ** 20;

const DTYPES = {
  F32: { bytes: 4, read: (view, offset) => view.getFloat32(offset, true), Array: Float32Array },
  F64: { bytes: 8, read: (view, offset) => view.getFloat64(offset, true), Array: Float32Array },
  F16: { bytes: 2, read: (view, offset) => halfToFloat(view.getUint16(offset, true)), Array: Float32Array },
  BF16: { bytes: 2, read: (view, offset) => bfloat16ToFloat(view.getUint16(offset, true)), Array: Float32Array },
  I32: { bytes: 4, read: (view, offset) => view.getInt32(offset, true), Array: Int32Array },
  U8: { bytes: 1, read: (view, offset) => view.getUint8(offset), Array: Uint8Array },
  BOOL: { bytes: 1, read: (view, offset) => view.getUint8(offset), Array: Uint8Array },
};

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

export function readSafetensors(bytes) {
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) {
    throw new TypeError(`bytes: expected a Uint8Array or ArrayBuffer, got ${describe(bytes)}`);
  }
  if (bytes.length < 8) throw malformed(`expected at least 8 bytes, got ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > MAX_HEADER_BYTES || 8 + headerLength > bytes.length) {
    throw malformed(`header length ${headerLength} exceeds the ${bytes.length - 8} bytes after it`);
  }
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  } catch (error) {
    throw malformed(`header is not JSON (${error.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw malformed('header is not a JSON object');
  }
  const dataStart = 8 + headerLength;
  const dataLength = bytes.length - dataStart;
  const tensors = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, shape, data_offsets: offsets } = entry ?? {};
    const type = DTYPES[dtype];
    if (!type) throw new TypeError(`bytes: tensor '${name}' has dtype ${describe(dtype)}; supported: ${Object.keys(DTYPES).join(', ')}`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw malformed(`tensor '${name}' has shape ${JSON.stringify(shape)}`);
    }
    const count = shape.reduce((a, b) => a * b, 1);
    const [begin, end] = Array.isArray(offsets) ? offsets : [];
    if (!Number.isSafeInteger(begin) || !Number.isSafeInteger(end) || begin < 0 || end > dataLength || end - begin !== count * type.bytes) {
      throw malformed(`tensor '${name}' (${dtype} ${JSON.stringify(shape)}) has data_offsets ${JSON.stringify(offsets)} for ${dataLength} data bytes`);
    }
    const data = new type.Array(count);
    for (let i = 0; i < count; i++) data[i] = type.read(view, dataStart + begin + i * type.bytes);
    tensors[name] = { data, shape: [...shape] };
  }
  return tensors;
}
