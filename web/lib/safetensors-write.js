// Writes the .safetensors format (https://github.com/huggingface/safetensors#format), the
// inverse of readSafetensors for the arrays it returns: Float32Array -> F32, Int32Array -> I32,
// Uint8Array -> U8. The header lists the tensors in the order given, back to back, and is
// space-padded so the data section starts at a multiple of 8 bytes, as the reference writer does.

import { describe } from './tensor.js';

const DTYPE_OF = new Map([[Float32Array, 'F32'], [Int32Array, 'I32'], [Uint8Array, 'U8']]);

function checkEntry(name, tensor) {
  const dtype = DTYPE_OF.get(tensor?.data?.constructor);
  if (!dtype) {
    throw new TypeError(`tensors['${name}'].data: expected a Float32Array, Int32Array or Uint8Array, got ${describe(tensor?.data)}`);
  }
  const { shape } = tensor;
  if (!Array.isArray(shape) || !shape.every((n) => Number.isSafeInteger(n) && n >= 0)) {
    throw new TypeError(`tensors['${name}'].shape: expected an array of non-negative integers, got ${describe(shape)}`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== tensor.data.length) {
    throw new RangeError(`tensors['${name}']: shape [${shape.join(', ')}] holds ${count} elements, data has ${tensor.data.length}`);
  }
  return dtype;
}

/**
 * A .safetensors file (Uint8Array) from { name: { data, shape } } (a state dict) and optional
 * `metadata` ({ string: string }, stored as __metadata__).
 */
export function writeSafetensors(tensors, { metadata } = {}) {
  if (tensors === null || typeof tensors !== 'object') {
    throw new TypeError(`tensors: expected an object of { data, shape }, got ${describe(tensors)}`);
  }
  const header = Object.create(null);
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== 'object' || !Object.values(metadata).every((v) => typeof v === 'string')) {
      throw new TypeError(`metadata: expected an object of strings, got ${describe(metadata)}`);
    }
    header.__metadata__ = { ...metadata };
  }
  const entries = Object.entries(tensors);
  let offset = 0;
  for (const [name, tensor] of entries) {
    if (name === '__metadata__') throw new RangeError("tensors: the name '__metadata__' is reserved by the format");
    const dtype = checkEntry(name, tensor);
    header[name] = { dtype, shape: [...tensor.shape], data_offsets: [offset, offset + tensor.data.byteLength] };
    offset += tensor.data.byteLength;
  }
  const text = new TextEncoder().encode(JSON.stringify(header));
  const headerLength = Math.ceil((8 + text.length) / 8) * 8 - 8;
  const file = new Uint8Array(8 + headerLength + offset);
  const view = new DataView(file.buffer);
  view.setBigUint64(0, BigInt(headerLength), true);
  file.fill(0x20, 8, 8 + headerLength);
  file.set(text, 8);
  // Element by element through the DataView: little-endian whatever the host's byte order.
  let at = 8 + headerLength;
  for (const [, { data }] of entries) {
    if (data instanceof Float32Array) data.forEach((x, i) => view.setFloat32(at + 4 * i, x, true));
    else if (data instanceof Int32Array) data.forEach((x, i) => view.setInt32(at + 4 * i, x, true));
    else file.set(data, at);
    at += data.byteLength;
  }
  return file;
}
