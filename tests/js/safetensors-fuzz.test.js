// A seeded mutation fuzzer for readSafetensors: valid files from the test writer (random names,
// dtypes, shapes, data order, metadata and padding), then byte flips, inserts, deletes,
// truncations, header-length changes and header-field edits. Every outcome must be either a clean
// error from the reader (a TypeError or RangeError whose message starts with 'bytes:') or a
// null-prototype dictionary that an independent check accepts: the header is UTF-8 JSON starting
// with '{', the offsets tile the data section, and each tensor re-encodes to the file's bytes.
// Bounded by a case count and a time budget; prints its seed (ATTN_FUZZ_SEED reruns one).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { readSafetensors } from 'attention-wasm';
import { mulberry32 } from '../../harness/reference.js';
import { ENCODERS, rawFile } from './safetensors-writer.js';
import { fuzzSeed } from './fuzz-seed.js';

const CASES = 8000;
const BUDGET_MS = 3000;
const DTYPES = Object.keys(ENCODERS);
const NAMES = ['w', 'b', 'in_proj_weight', 'out_proj.bias', '__proto__', 'toString', 'é名', '', 'a"b\\c:'];
const OTHER_DTYPES = ['I64', 'F8_E4M3', 'toString', '__proto__', 'f32', 7, null];

/** A valid file: its header object, and the data section with the tensors in a random order. */
function randomFile(rng) {
  const int = (max) => Math.floor(rng() * (max + 1));
  const pick = (list) => list[int(list.length - 1)];
  const names = [...new Set(Array.from({ length: int(4) }, () => pick(NAMES)))];
  const tensors = names.map((name) => {
    const dtype = pick(DTYPES);
    const shape = Array.from({ length: int(3) }, () => int(3));
    const size = shape.reduce((a, b) => a * b, 1) * ENCODERS[dtype].bytes;
    return { name, dtype, shape, bytes: Uint8Array.from({ length: size }, () => int(255)) };
  });
  const order = [...tensors].sort(() => rng() - 0.5);
  const data = new Uint8Array(order.reduce((sum, t) => sum + t.bytes.length, 0));
  const header = Object.create(null);
  if (rng() < 0.3) header.__metadata__ = { format: 'pt', note: pick(NAMES) };
  let offset = 0;
  for (const t of order) {
    data.set(t.bytes, offset);
    t.offsets = [offset, offset + t.bytes.length];
    offset += t.bytes.length;
  }
  for (const t of tensors) header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: t.offsets };
  return { header, data };
}

// Edits of one header field; the header is re-serialised around the original data.
const FIELD_EDITS = [
  (entry, rng, pick) => { entry.dtype = pick(rng() < 0.5 ? DTYPES : OTHER_DTYPES); },
  (entry, rng, pick) => { if (entry.shape.length) entry.shape[0] += pick([-1, 1, 0.5, 2 ** 53]); else entry.shape.push(pick([0, 1, 2])); },
  (entry, rng, pick) => { entry.shape = pick([null, '2', [-1], [[1]], {}]); },
  (entry, rng, pick) => { entry.data_offsets[Math.floor(rng() * 2)] += pick([-4, -1, 1, 2, 4, 8]); },
  (entry) => { entry.data_offsets.reverse(); },
  (entry, rng, pick) => { entry.data_offsets = pick([[0], [0, 0, 0], null, '0,4', [0.5, 4.5], [-0, 0]]); },
  (entry) => { delete entry.dtype; },
];
const HEADER_EDITS = [
  (header, rng, pick) => { const name = pick(Object.keys(header)); if (name !== undefined) delete header[name]; },
  (header, rng, pick) => { header[pick(NAMES)] = { dtype: 'U8', shape: [1], data_offsets: [0, 1] }; },
  (header, rng, pick) => { header.__metadata__ = pick([{ a: 1 }, 'pt', null, { a: { b: 'c' } }, { a: 'b' }]); },
];

function headerText(header, rng) {
  let text = JSON.stringify(header);
  // Duplicate a key now and then, as text: JSON.parse would keep only one of them.
  if (rng() < 0.05 && text.length > 2) text = text.replace(/^\{("[^"]*":)/, '{$1{"x":"y"},$1');
  return text;
}

/** The byte-level mutations; each returns a new array. */
const BYTE_EDITS = [
  (file, rng) => { const out = Uint8Array.from(file); if (out.length) out[Math.floor(rng() * out.length)] ^= 1 << Math.floor(rng() * 8); return out; },
  (file, rng) => { const out = Uint8Array.from(file); if (out.length) out[Math.floor(rng() * out.length)] = Math.floor(rng() * 256); return out; },
  (file, rng) => { const at = Math.floor(rng() * (file.length + 1)); return Uint8Array.from([...file.subarray(0, at), Math.floor(rng() * 256), ...file.subarray(at)]); },
  (file, rng) => { const at = Math.floor(rng() * file.length); return Uint8Array.from([...file.subarray(0, at), ...file.subarray(at + 1)]); },
  (file, rng) => file.slice(0, Math.floor(rng() * file.length)),
  (file, rng) => Uint8Array.from([...file, ...Array.from({ length: 1 + Math.floor(rng() * 8) }, () => 0x20)]),
  (file, rng) => { const out = Uint8Array.from(file); if (out.length >= 8) new DataView(out.buffer).setBigUint64(0, new DataView(out.buffer).getBigUint64(0, true) + BigInt(Math.floor(rng() * 17) - 8), true); return out; },
];

/** A mutated file, or a valid one with only its data bytes changed (which must still read). */
function mutate(rng) {
  const pick = (list) => list[Math.floor(rng() * list.length)];
  const { header, data } = randomFile(rng);
  const kind = rng();
  if (kind < 0.2) { // data only: still valid
    for (let i = 0; i < data.length; i++) if (rng() < 0.3) data[i] = Math.floor(rng() * 256);
    return rawFile(headerText(header, () => 1), data, undefined, 8);
  }
  if (kind < 0.55) { // header fields
    const tensors = Object.keys(header).filter((name) => name !== '__metadata__');
    if (tensors.length && rng() < 0.7) pick(FIELD_EDITS)(header[pick(tensors)], rng, pick);
    else pick(HEADER_EDITS)(header, rng, pick);
    return rawFile(headerText(header, rng), data, undefined, pick([1, 8]));
  }
  let file = rawFile(headerText(header, rng), data, undefined, 8);
  for (let edits = 1 + Math.floor(rng() * 3); edits > 0; edits--) file = pick(BYTE_EDITS)(file, rng);
  return file;
}

/** Bits of a NaN in each float dtype: any NaN pattern reads as NaN and cannot round-trip. */
const isNaNBits = { F32: (v, o) => Number.isNaN(v.getFloat32(o, true)), F16: (v, o) => (v.getUint16(o, true) & 0x7c00) === 0x7c00 && (v.getUint16(o, true) & 0x3ff) !== 0, BF16: (v, o) => Number.isNaN(new DataView(Uint8Array.of(0, 0, v.getUint8(o), v.getUint8(o + 1)).buffer).getFloat32(0, true)) };

/** Checks an accepted file independently of the reader; returns a reason it is wrong, or null. */
function checkAccepted(file, tensors) {
  if (Object.getPrototypeOf(tensors) !== null) return 'the result has a prototype';
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const length = Number(view.getBigUint64(0, true));
  const headerBytes = file.subarray(8, 8 + length);
  if (headerBytes[0] !== 0x7b) return "accepted a header that does not start with '{'";
  let header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
  } catch (error) {
    return `accepted a header that is not UTF-8 JSON: ${error.message}`;
  }
  if (Object.hasOwn(header, '__metadata__')) {
    const metadata = header.__metadata__;
    const isMap = metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata);
    if (!isMap || Object.values(metadata).some((v) => typeof v !== 'string')) return `accepted __metadata__ ${JSON.stringify(metadata)}`;
  }
  const names = Object.keys(header).filter((name) => name !== '__metadata__');
  if (JSON.stringify(Object.keys(tensors).sort()) !== JSON.stringify(names.sort())) return `names ${Object.keys(tensors)} != header ${names}`;
  const dataStart = 8 + length;
  const spans = names.map((name) => header[name].data_offsets).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let covered = 0;
  for (const [begin, end] of spans) {
    if (begin !== covered) return `accepted offsets that do not tile the data: [${begin}, ${end}) after ${covered}`;
    covered = end;
  }
  if (dataStart + covered !== file.length) return `accepted ${file.length - dataStart - covered} uncovered data bytes`;
  for (const name of names) {
    const { dtype, shape, data_offsets: [begin, end] } = header[name];
    const { data, shape: gotShape } = tensors[name];
    if (JSON.stringify(gotShape) !== JSON.stringify(shape)) return `${name}: shape ${gotShape} != ${shape}`;
    const { bytes: width } = ENCODERS[dtype];
    if (data.length * width !== end - begin) return `${name}: ${data.length} values for ${end - begin} bytes`;
    const out = new DataView(new ArrayBuffer(width));
    for (let i = 0; i < data.length; i++) {
      const at = dataStart + begin + i * width;
      if (dtype === 'F64') {
        const want = Math.fround(view.getFloat64(at, true));
        if (!Object.is(want, data[i]) && !(Number.isNaN(want) && Number.isNaN(data[i]))) return `${name}[${i}]: ${data[i]} != F64 ${want}`;
        continue;
      }
      if (isNaNBits[dtype]?.(view, at)) {
        if (!Number.isNaN(data[i])) return `${name}[${i}]: NaN bits read as ${data[i]}`;
        continue;
      }
      // BOOL bytes come back raw (the format does not check values), so they re-encode as U8.
      ENCODERS[dtype === 'BOOL' ? 'U8' : dtype].write(out, 0, data[i]);
      for (let k = 0; k < width; k++) {
        if (out.getUint8(k) !== file[at + k]) return `${name}[${i}] = ${data[i]} does not re-encode to the file's ${dtype} bytes`;
      }
    }
  }
  return null;
}

test('readSafetensors on mutated files: a clean error or a faithful read', (t) => {
  const seed = fuzzSeed();
  t.diagnostic(`seed ${seed} (rerun with ATTN_FUZZ_SEED=${seed})`);
  const rng = mulberry32(seed);
  const outcomes = { accepted: 0, RangeError: 0, TypeError: 0 };
  const started = performance.now();
  let cases = 0;
  for (; cases < CASES && performance.now() - started < BUDGET_MS; cases++) {
    const file = mutate(rng);
    const where = `seed ${seed}, case ${cases}`;
    let tensors;
    try {
      tensors = readSafetensors(file);
    } catch (error) {
      assert.ok(error instanceof RangeError || error instanceof TypeError, `${where}: ${error?.name}: ${error?.message}`);
      assert.match(error.message, /^bytes: /, `${where}: ${error.name}: ${error.message}`);
      outcomes[error.name]++;
      continue;
    }
    const wrong = checkAccepted(file, tensors);
    assert.equal(wrong, null, `${where}: ${wrong}`);
    outcomes.accepted++;
  }
  t.diagnostic(`${cases} cases in ${Math.round(performance.now() - started)} ms: ${JSON.stringify(outcomes)}`);
  // Both sides of the property must be exercised, or it proves nothing.
  assert.ok(outcomes.accepted >= cases / 10, `only ${outcomes.accepted} of ${cases} files were read`);
  assert.ok(outcomes.RangeError >= cases / 10, `only ${outcomes.RangeError} of ${cases} files were rejected as malformed`);
  assert.ok(cases >= 500, `only ${cases} cases ran in ${BUDGET_MS} ms`);
});
