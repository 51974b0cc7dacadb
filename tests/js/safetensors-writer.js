// A small .safetensors writer for the tests, written from the format's description
// (https://github.com/huggingface/safetensors#format), not from the package's reader: encoders
// for every dtype the package reads, whole files from tensor lists, and files from raw header text.

const roundHalfEven = (x) => {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
};

/** IEEE 754 binary16 bits of a number, round to nearest even. */
export function halfBits(value) {
  if (Number.isNaN(value)) return 0x7e00;
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  const x = Math.abs(value);
  if (x >= 65520) return sign | 0x7c00;
  if (x < 2 ** -14) return sign | roundHalfEven(x / 2 ** -24); // subnormal (1024 is the min normal)
  let e = Math.floor(Math.log2(x));
  if (2 ** e > x) e--;
  if (2 ** (e + 1) <= x) e++;
  let m = roundHalfEven((x / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e++;
  }
  return e > 15 ? sign | 0x7c00 : sign | ((e + 15) << 10) | m;
}

/** bfloat16 bits: the top half of the float32 bits, round to nearest even. */
export function bfloat16Bits(value) {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value);
  const bits = view.getUint32(0);
  if (Number.isNaN(value)) return 0x7fc0;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

export const ENCODERS = {
  F32: { bytes: 4, write: (v, o, x) => v.setFloat32(o, x, true) },
  F64: { bytes: 8, write: (v, o, x) => v.setFloat64(o, x, true) },
  F16: { bytes: 2, write: (v, o, x) => v.setUint16(o, halfBits(x), true) },
  BF16: { bytes: 2, write: (v, o, x) => v.setUint16(o, bfloat16Bits(x), true) },
  I32: { bytes: 4, write: (v, o, x) => v.setInt32(o, x, true) },
  U8: { bytes: 1, write: (v, o, x) => v.setUint8(o, x) },
  BOOL: { bytes: 1, write: (v, o, x) => v.setUint8(o, x ? 1 : 0) },
};

/** Raw little-endian bytes of `values` in `dtype` (for U16 bit patterns use dtype 'raw16'). */
export function encode(dtype, values) {
  if (dtype === 'raw16') {
    const out = new Uint8Array(values.length * 2);
    const view = new DataView(out.buffer);
    values.forEach((bits, i) => view.setUint16(2 * i, bits, true));
    return out;
  }
  const { bytes, write } = ENCODERS[dtype];
  const out = new Uint8Array(values.length * bytes);
  const view = new DataView(out.buffer);
  Array.from(values).forEach((x, i) => write(view, i * bytes, x));
  return out;
}

/**
 * A .safetensors file from [{ name, dtype, shape, bytes }]: the header lists each tensor's
 * data_offsets into the data section, which holds the tensors back to back. The header is
 * space-padded to a multiple of 8 bytes, as the reference writer does.
 */
export function buildSafetensors(entries, { metadata, header: overrideHeader } = {}) {
  const header = Object.create(null); // so that a tensor may be called __proto__
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const { name, dtype, shape, bytes } of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  const data = new Uint8Array(offset);
  offset = 0;
  for (const { bytes } of entries) {
    data.set(bytes, offset);
    offset += bytes.length;
  }
  return rawFile(overrideHeader ?? JSON.stringify(header), data, undefined, 8);
}

export const entry = (name, dtype, shape, values) => ({ name, dtype, shape, bytes: encode(dtype, values) });

/**
 * A file from raw header text (a string, or its bytes) and a data section (`data` bytes, or that many zero bytes), the
 * header space-padded to a multiple of `align` bytes and its length declared as
 * `declaredLength` if given.
 */
export function rawFile(json, data = 0, declaredLength = undefined, align = 1) {
  const text = typeof json === 'string' ? new TextEncoder().encode(json) : json;
  const headerLength = Math.ceil((8 + text.length) / align) * align - 8;
  const bytes = typeof data === 'number' ? new Uint8Array(data) : data;
  const file = new Uint8Array(8 + headerLength + bytes.length);
  new DataView(file.buffer).setBigUint64(0, BigInt(declaredLength ?? headerLength), true);
  file.fill(0x20, 8, 8 + headerLength);
  file.set(text, 8);
  file.set(bytes, 8 + headerLength);
  return file;
}
