// writeSafetensors (web/lib/safetensors-write.js): its bytes equal those of the tests' own
// writer (tests/js/safetensors-writer.js, written from the format's description), readSafetensors
// reads them back exactly, and bad input names the argument.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readSafetensors, writeSafetensors } from 'attention-wasm';
import { buildSafetensors, entry } from './safetensors-writer.js';

describe('writeSafetensors', () => {
  const w = { data: Float32Array.from([1.5, -2, 3.25e-8, Math.fround(Math.PI), -0, 7]), shape: [2, 3] };
  const ids = { data: Int32Array.from([-5, 0, 2147483647]), shape: [3] };
  const mask = { data: Uint8Array.from([1, 0, 1, 1]), shape: [2, 2] };

  test('writes what the format describes, byte for byte', () => {
    const expected = buildSafetensors([
      entry('w', 'F32', [2, 3], w.data), entry('ids', 'I32', [3], ids.data), entry('mask', 'U8', [2, 2], mask.data),
    ], { metadata: { format: 'pt' } });
    assert.deepEqual(writeSafetensors({ w, ids, mask }, { metadata: { format: 'pt' } }), expected);
    // The data section starts on an 8-byte boundary.
    const headerLength = Number(new DataView(expected.buffer).getBigUint64(0, true));
    assert.equal((8 + headerLength) % 8, 0);
  });

  test('round-trips through readSafetensors, empty tensors included', () => {
    const empty = { data: new Float32Array(0), shape: [0, 4] };
    const back = readSafetensors(writeSafetensors({ w, ids, mask, empty }));
    assert.deepEqual(Object.keys(back), ['w', 'ids', 'mask', 'empty']);
    assert.deepEqual(back.w, { data: w.data, shape: [2, 3] });
    assert.ok(Object.is(back.w.data[4], -0));
    assert.deepEqual(back.ids, ids);
    assert.deepEqual(back.mask, mask);
    assert.deepEqual(back.empty.shape, [0, 4]);
  });

  test('rejects what it cannot store, naming the tensor', () => {
    assert.throws(() => writeSafetensors({ x: { data: [1, 2], shape: [2] } }), { name: 'TypeError', message: /tensors\['x'\]\.data: expected a Float32Array/ });
    assert.throws(() => writeSafetensors({ x: { data: new Float32Array(3), shape: [2, 2] } }), { name: 'RangeError', message: /shape \[2, 2\] holds 4 elements, data has 3/ });
    assert.throws(() => writeSafetensors({ x: { data: new Float32Array(1), shape: [1.5] } }), { name: 'TypeError', message: /tensors\['x'\]\.shape/ });
    assert.throws(() => writeSafetensors(null), { name: 'TypeError', message: /^tensors:/ });
    assert.throws(() => writeSafetensors({}, { metadata: { a: 1 } }), { name: 'TypeError', message: /^metadata:/ });
  });
});
