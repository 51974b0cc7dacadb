// readSafetensors on files built byte by byte here (8-byte little-endian header length, JSON
// header, raw little-endian data): every dtype, __metadata__, a round trip into
// MultiHeadAttention.loadStateDict, and malformed files.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { readSafetensors } from 'attention-wasm';
import { backends, labelOf } from './backends.js';
import * as ref from '../../harness/reference.js';
import { buildSafetensors, encode, entry, rawFile } from './safetensors-writer.js';

const { assertClose, mulberry32, randomTensor, tensor } = ref;

// ---------------------------------------------------------------------------------------------

describe('readSafetensors', () => {
  test('the top-level export and attn.readSafetensors are the same function', () => {
    for (const attn of backends) assert.equal(attn.readSafetensors, readSafetensors);
  });

  test('F32, F64, I32, U8 and BOOL tensors; __metadata__ is not a tensor', () => {
    const f32 = [1.5, -2.25, 3.4028234663852886e38, 1e-45, -0, 0.1];
    const f64 = [0.1, -1e-3, 123456.789, 1e300, -Infinity, 2.5];
    const file = buildSafetensors([
      entry('a.f32', 'F32', [2, 3], f32),
      entry('b.f64', 'F64', [3, 2], f64),
      entry('c.i32', 'I32', [4], [-2147483648, -1, 0, 2147483647]),
      entry('d.u8', 'U8', [2, 2], [0, 1, 128, 255]),
      entry('e.bool', 'BOOL', [3], [1, 0, 1]),
    ], { metadata: { format: 'pt', note: 'built by hand' } });
    const tensors = readSafetensors(file);
    assert.deepEqual(Object.keys(tensors).sort(), ['a.f32', 'b.f64', 'c.i32', 'd.u8', 'e.bool']);
    assert.ok(tensors['a.f32'].data instanceof Float32Array);
    assert.deepEqual(tensors['a.f32'].shape, [2, 3]);
    assert.deepEqual(tensors['a.f32'].data, Float32Array.from(f32));
    assert.ok(tensors['b.f64'].data instanceof Float32Array, 'F64 becomes Float32Array');
    assert.deepEqual(tensors['b.f64'].data, Float32Array.from(f64));
    assert.deepEqual(tensors['b.f64'].shape, [3, 2]);
    assert.ok(tensors['c.i32'].data instanceof Int32Array);
    assert.deepEqual(Array.from(tensors['c.i32'].data), [-2147483648, -1, 0, 2147483647]);
    assert.ok(tensors['d.u8'].data instanceof Uint8Array);
    assert.deepEqual(Array.from(tensors['d.u8'].data), [0, 1, 128, 255]);
    assert.ok(tensors['e.bool'].data instanceof Uint8Array);
    assert.deepEqual(Array.from(tensors['e.bool'].data), [1, 0, 1]);
  });

  test('F16 bit patterns: normals, subnormals, ±0, ±Infinity, NaN, the largest finite', () => {
    const bits = [0x3c00, 0xc000, 0x3555, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x8000, 0x0000, 0x7c00, 0xfc00, 0x7e00];
    const want = [1, -2, 0.333251953125, 65504, 2 ** -24, 1023 * 2 ** -24, 2 ** -14, -0, 0, Infinity, -Infinity, NaN];
    const { h } = readSafetensors(buildSafetensors([{ name: 'h', dtype: 'F16', shape: [12], bytes: encode('raw16', bits) }]));
    assert.ok(h.data instanceof Float32Array);
    assert.deepEqual(Array.from(h.data), want);
  });

  test('BF16 bit patterns: the top half of float32', () => {
    const bits = [0x3f80, 0xc040, 0x3eaa, 0x7f7f, 0x0001, 0x8000, 0x7f80, 0xff80, 0x7fc0];
    const view = new DataView(new ArrayBuffer(4));
    const want = bits.map((b) => {
      view.setUint32(0, b << 16);
      return view.getFloat32(0);
    });
    assert.equal(want[0], 1);
    assert.equal(want[1], -3);
    const { b } = readSafetensors(buildSafetensors([{ name: 'b', dtype: 'BF16', shape: [3, 3], bytes: encode('raw16', bits) }]));
    assert.deepEqual(Array.from(b.data), want);
  });

  test('scalars (shape []) and empty tensors (shape [0], [2, 0])', () => {
    const tensors = readSafetensors(buildSafetensors([
      entry('scalar', 'F32', [], [4.5]),
      entry('empty', 'F32', [0], []),
      entry('empty2', 'F16', [2, 0], []),
    ]));
    assert.deepEqual(tensors.scalar, { data: Float32Array.from([4.5]), shape: [] });
    assert.deepEqual(tensors.empty, { data: new Float32Array(0), shape: [0] });
    assert.deepEqual(tensors.empty2.shape, [2, 0]);
  });

  test('an ArrayBuffer, and a Uint8Array at an odd offset inside a larger buffer', () => {
    const file = buildSafetensors([entry('w', 'F32', [2, 2], [1, 2, 3, 4]), entry('v', 'F64', [1], [5])]);
    assert.deepEqual(Array.from(readSafetensors(file.buffer.slice(0)).w.data), [1, 2, 3, 4]);
    const big = new Uint8Array(file.length + 10).fill(0xee);
    big.set(file, 3);
    const view = big.subarray(3, 3 + file.length);
    const tensors = readSafetensors(view);
    assert.deepEqual(Array.from(tensors.w.data), [1, 2, 3, 4]);
    assert.deepEqual(Array.from(tensors.v.data), [5]);
  });

  test('tensors whose data is stored out of header order', () => {
    const a = encode('F32', [1, 2]);
    const b = encode('F32', [3, 4, 5]);
    const header = JSON.stringify({ a: { dtype: 'F32', shape: [2], data_offsets: [12, 20] }, b: { dtype: 'F32', shape: [3], data_offsets: [0, 12] } });
    const file = rawFile(header, 20);
    file.set(b, file.length - 20);
    file.set(a, file.length - 8);
    const tensors = readSafetensors(file);
    assert.deepEqual(Array.from(tensors.a.data), [1, 2]);
    assert.deepEqual(Array.from(tensors.b.data), [3, 4, 5]);
  });

  for (const attn of backends) {
    test(`round trip into MultiHeadAttention.loadStateDict (F16, BF16, F64, F32) (${labelOf(attn)})`, () => {
      const E = 8, H = 2;
      const config = { embedDim: E, numHeads: H };
      const rng = mulberry32(2000);
      // Values exactly representable in each dtype, so the expected weights are known exactly.
      const grid = (count, step) => Float32Array.from({ length: count }, () => Math.round((rng() * 2 - 1) / step) * step);
      const dict = {
        in_proj_weight: tensor(grid(3 * E * E, 1 / 256), [3 * E, E]), // F16: 11 significant bits
        in_proj_bias: tensor(grid(3 * E, 1 / 64), [3 * E]), // BF16: 8 significant bits
        'out_proj.weight': randomTensor(rng, [E, E], -0.5, 0.5), // F64 of float32 values: exact
        'out_proj.bias': randomTensor(rng, [E], -0.5, 0.5), // F32
      };
      const file = buildSafetensors([
        entry('out_proj.bias', 'F32', [E], dict['out_proj.bias'].data),
        entry('in_proj_weight', 'F16', [3 * E, E], dict.in_proj_weight.data),
        entry('out_proj.weight', 'F64', [E, E], dict['out_proj.weight'].data),
        entry('in_proj_bias', 'BF16', [3 * E], dict.in_proj_bias.data),
      ], { metadata: { format: 'pt' } });
      const loaded = attn.readSafetensors(file);
      for (const name of Object.keys(dict)) assert.deepEqual(loaded[name], dict[name], name);

      const mha = new attn.MultiHeadAttention(config).loadStateDict(loaded);
      const x = randomTensor(rng, [2, 3, E]);
      const memory = randomTensor(rng, [2, 4, E]);
      const got = mha.forward(x, memory, memory, { averageAttnWeights: false });
      const want = ref.multiHeadAttention(dict, config, x, memory, memory, { averageAttnWeights: false });
      assertClose(got.output, want.output, { label: 'output' });
      assertClose(got.weights, want.weights, { label: 'weights' });
      mha.dispose();
    });
  }

  test('F16 and BF16 round to nearest even (encoder check against the reader)', () => {
    const values = [0.1, -0.3, 1 / 3, 1000.7, 1e-6, -65504, 2 ** -20];
    const { h, b } = readSafetensors(buildSafetensors([entry('h', 'F16', [7], values), entry('b', 'BF16', [7], values)]));
    for (let i = 0; i < values.length; i++) {
      assert.ok(Math.abs(h.data[i] - values[i]) <= Math.abs(values[i]) * 2 ** -11 + 2 ** -25, `F16 ${values[i]} -> ${h.data[i]}`);
      assert.ok(Math.abs(b.data[i] - values[i]) <= Math.abs(values[i]) * 2 ** -8, `BF16 ${values[i]} -> ${b.data[i]}`);
    }
  });

  describe('malformed files', () => {
    const good = buildSafetensors([entry('w', 'F32', [2, 3], [1, 2, 3, 4, 5, 6])]);
    const malformed = (fn, detail) => assert.throws(fn, (error) => {
      assert.ok(error instanceof RangeError, `${error.name}: ${error.message}`);
      assert.match(error.message, /bytes/);
      assert.match(error.message, detail);
      return true;
    });

    test('not bytes at all: a TypeError naming the argument', () => {
      for (const value of ['file', null, undefined, [1, 2, 3], new Float32Array(8), { length: 8 }]) {
        assert.throws(() => readSafetensors(value), { name: 'TypeError', message: /bytes: expected a Uint8Array or ArrayBuffer/ });
      }
    });

    test('truncated: fewer than 8 bytes, inside the header, inside the data', () => {
      malformed(() => readSafetensors(new Uint8Array(0)), /8 bytes, got 0/);
      malformed(() => readSafetensors(good.subarray(0, 5)), /8 bytes, got 5/);
      malformed(() => readSafetensors(good.subarray(0, 20)), /header length/);
      malformed(() => readSafetensors(good.subarray(0, good.length - 1)), /'w'.*data_offsets/);
    });

    test('a header length larger than the file (also 2^40 and 2^64 - 1)', () => {
      for (const declared of [1000n, 2n ** 40n, 2n ** 64n - 1n]) {
        const file = Uint8Array.from(good);
        new DataView(file.buffer).setBigUint64(0, declared, true);
        malformed(() => readSafetensors(file), /header length/);
      }
    });

    test('a header that is not JSON, or not a JSON object', () => {
      malformed(() => readSafetensors(rawFile('{"w": {"dtype": "F32", ')), /JSON/);
      malformed(() => readSafetensors(rawFile('')), /JSON/);
      malformed(() => readSafetensors(rawFile('\u00ff\u00fe')), /JSON/);
      malformed(() => readSafetensors(rawFile('[1, 2]')), /object/);
      malformed(() => readSafetensors(rawFile('null')), /object/);
      malformed(() => readSafetensors(rawFile('42')), /object/);
    });

    test('data offsets out of range, reversed, negative, fractional, or not matching the shape', () => {
      const file = (offsets, shape = [2], dtype = 'F32', dataBytes = 8) =>
        rawFile(JSON.stringify({ w: { dtype, shape, data_offsets: offsets } }), dataBytes);
      readSafetensors(file([0, 8])); // the well-formed one reads
      for (const offsets of [[0, 16], [8, 16], [4, 12], [-8, 0], [8, 0], [0.5, 8.5], [0, 4], ['0', '8'], [0], null, undefined]) {
        malformed(() => readSafetensors(file(offsets)), /'w'/);
      }
      malformed(() => readSafetensors(file([0, 8], [3])), /'w'.*data_offsets/);
      // A huge declared shape over a tiny data section fails on the offsets, without allocating.
      malformed(() => readSafetensors(file([0, 8], [2 ** 31, 2 ** 31])), /'w'/);
      malformed(() => readSafetensors(file([0, 2 ** 34], [2 ** 32])), /'w'/);
    });

    test('bad shapes', () => {
      for (const shape of [[-1], [1.5], ['2'], 'x', null, [2 ** 60, 2 ** 60, 2 ** 60]]) {
        assert.throws(() => readSafetensors(rawFile(JSON.stringify({ w: { dtype: 'F32', shape, data_offsets: [0, 8] } }), 8)),
          (error) => error instanceof RangeError && /bytes/.test(error.message) && /'w'/.test(error.message));
      }
    });

    test('an unsupported dtype is a TypeError naming the tensor and the dtype, Object.prototype names too', () => {
      // 'toString' and '__proto__' once found Object.prototype members and failed another way.
      for (const dtype of ['F8_E4M3', 'I64', 'f32', 42, null, 'toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf']) {
        const file = rawFile(JSON.stringify({ w: { dtype, shape: [2], data_offsets: [0, 8] } }), 8);
        assert.throws(() => readSafetensors(file), (error) => {
          assert.ok(error instanceof TypeError, `${dtype}: ${error.name}: ${error.message}`);
          assert.match(error.message, /^bytes: tensor 'w' has unsupported dtype/);
          assert.ok(error.message.includes(String(dtype)), error.message);
          assert.match(error.message, /supported: F32, F64, F16, BF16, I32, U8, BOOL/);
          return true;
        });
      }
    });

    test('an entry that is not a tensor description', () => {
      for (const value of [5, 'F32', null, [1, 2], true]) {
        malformed(() => readSafetensors(rawFile(JSON.stringify({ w: value }))), /tensor 'w' must be an object/);
      }
    });
  });

  // One test per rule of the format (https://github.com/huggingface/safetensors#format) that the
  // reader once let through; the reference parser (the Rust crate) rejects each of these files.
  describe('the letter of the format', () => {
    const malformed = (fn, detail) => assert.throws(fn, (error) => {
      assert.ok(error instanceof RangeError, `${error.name}: ${error.message}`);
      assert.match(error.message, /^bytes: not a valid \.safetensors file: /);
      assert.match(error.message, detail);
      return true;
    });
    const f32 = (name, begin, count) => ({ [name]: { dtype: 'F32', shape: [count], data_offsets: [begin, begin + 4 * count] } });
    const file = (header, dataBytes) => rawFile(JSON.stringify(header), dataBytes);

    test('the header must be valid UTF-8 (no replacement characters)', () => {
      const good = file(f32('w', 0, 2), 8);
      readSafetensors(good);
      // The name starts at header byte 2 (after '{"'): a lone continuation byte, an overlong
      // '/', a UTF-16 surrogate encoded in UTF-8, a truncated 2-byte sequence.
      for (const bad of [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xc3]]) {
        const header = new TextEncoder().encode(JSON.stringify(f32('x'.repeat(bad.length), 0, 2)));
        header.set(bad, 2);
        malformed(() => readSafetensors(rawFile(header, 8)), /the header is not valid UTF-8/);
      }
    });

    test('the header must start with \'{\': no leading space, BOM or other value', () => {
      const json = JSON.stringify(f32('w', 0, 2));
      for (const text of [` ${json}`, `\n${json}`, `\ufeff${json}`]) malformed(() => readSafetensors(rawFile(text, 8)), /starting with '\{'/);
      malformed(() => readSafetensors(rawFile('', 0)), /starting with '\{', got an empty header/);
      // Trailing padding is allowed: spaces (as the reference writer pads) and other JSON space.
      for (const text of [`${json}       `, `${json}\n\t `]) assert.deepEqual(Array.from(readSafetensors(rawFile(text, 8)).w.data), [0, 0]);
    });

    test('duplicate keys are rejected, at the top level and inside an entry', () => {
      const entry = '{"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}';
      malformed(() => readSafetensors(rawFile(`{"w": ${entry}, "w": ${entry}}`, 8)), /duplicate key/);
      malformed(() => readSafetensors(rawFile('{"w": {"dtype": "I32", "dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}', 8)), /duplicate key/);
      malformed(() => readSafetensors(rawFile(`{"__metadata__": {"a": "1", "a": "2"}, "w": ${entry}}`, 8)), /duplicate key/);
      // Colons, quotes and escapes inside strings are not keys.
      const tricky = readSafetensors(rawFile(`{"__metadata__": {"a:b": "c:\\\":d"}, "w\\\":": ${entry}}`, 8));
      assert.deepEqual(Object.keys(tricky), ['w":']);
    });

    test('__metadata__ must be a map from strings to strings', () => {
      const tensor = f32('w', 0, 2);
      readSafetensors(file({ __metadata__: { format: 'pt', empty: '' }, ...tensor }, 8));
      for (const metadata of [{ format: 1 }, { a: 'x', b: null }, { a: { b: 'c' } }, { a: ['x'] }, { a: true }]) {
        malformed(() => readSafetensors(file({ __metadata__: metadata, ...tensor }, 8)), /__metadata__ must map strings to strings/);
      }
      for (const metadata of ['pt', 5, null, ['a']]) {
        malformed(() => readSafetensors(file({ __metadata__: metadata, ...tensor }, 8)), /__metadata__ must be an object/);
      }
    });

    test('tensors may not overlap', () => {
      malformed(() => readSafetensors(file({ ...f32('a', 0, 2), ...f32('b', 4, 2) }, 12)), /tensor '[ab]'.*overlaps tensor '[ab]'/);
      malformed(() => readSafetensors(file({ ...f32('a', 0, 2), ...f32('b', 0, 2) }, 8)), /overlaps/);
      malformed(() => readSafetensors(file({ ...f32('a', 0, 4), ...f32('b', 4, 1) }, 16)), /tensor 'b'.*overlaps tensor 'a'/);
    });

    test('every data byte belongs to a tensor: no gap, no leading or trailing bytes', () => {
      malformed(() => readSafetensors(file({ ...f32('a', 0, 1), ...f32('b', 8, 1) }, 12)), /data bytes \[4, 8\) belong to no tensor/);
      malformed(() => readSafetensors(file(f32('a', 4, 2), 12)), /data bytes \[0, 4\) belong to no tensor/);
      malformed(() => readSafetensors(file(f32('a', 0, 2), 12)), /data bytes \[8, 12\) belong to no tensor/);
      malformed(() => readSafetensors(file({}, 1)), /data bytes \[0, 1\) belong to no tensor/);
      const empty = readSafetensors(file({}, 0));
      assert.deepEqual(Object.keys(empty), []);
      // Empty tensors take no bytes, wherever they sit (the reference parser allows this too).
      const tensors = readSafetensors(file({ ...f32('a', 0, 2), ...f32('e', 8, 0), ...f32('z', 0, 0) }, 8));
      assert.deepEqual(Object.keys(tensors).sort(), ['a', 'e', 'z']);
    });

    test('data_offsets are exactly [begin, end]', () => {
      for (const offsets of [[0, 8, 8], [0], [], { 0: 0, 1: 8 }, '0,8']) {
        malformed(() => readSafetensors(file({ w: { dtype: 'F32', shape: [2], data_offsets: offsets } }, 8)), /tensor 'w' has data_offsets/);
      }
    });

    test('a tensor named __proto__ (or toString) is an ordinary key of a null-prototype result', () => {
      const names = ['__proto__', 'toString', 'constructor', 'hasOwnProperty'];
      const entries = names.map((name, i) => entry(name, 'F32', [1], [i + 0.5]));
      const tensors = readSafetensors(buildSafetensors(entries));
      assert.equal(Object.getPrototypeOf(tensors), null);
      assert.deepEqual(Object.keys(tensors).sort(), [...names].sort());
      names.forEach((name, i) => {
        assert.ok(Object.hasOwn(tensors, name), name);
        assert.deepEqual(tensors[name], { data: Float32Array.from([i + 0.5]), shape: [1] }, name);
      });
      assert.equal(Object.getPrototypeOf(readSafetensors(buildSafetensors([]))), null);
    });
  });
});
