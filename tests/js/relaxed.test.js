// The relaxed-SIMD loops (cpp/relaxed, web/lib/relaxed.js): when they are used, that they really
// run (scores and products only a fused multiply-add gives), that engines without relaxed SIMD fall back to
// the SIMD build's own loops, and that the module cannot touch the main module's memory except
// through its arguments and the stack the loader gives it. Their numbers against the
// double-precision reference are the whole suite's: backends.js loads them first. Node 20
// validates relaxed SIMD only with --experimental-wasm-relaxed-simd (scripts/test-js.sh passes
// it); Node 24 without any flag.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { loadAttention } from 'attention-wasm';
import { backends } from './backends.js';

// The SIMD build without the relaxed loops is loaded here too when the suite runs on the default
// load alone (ATTN_LOADS=default): the tests below compare the two.
const [relaxed] = backends;
const plain = backends[1] ?? await loadAttention({ relaxedSimd: false });
// V8 turned relaxed SIMD on by default in 11.4; Node 20 has V8 11.3, Node 21 and later newer ones.
const relaxedByDefault = Number(process.versions.node.split('.')[0]) > 20;

describe('loading', () => {
  test('the default load takes the relaxed loops where relaxed SIMD validates', () => {
    assert.equal(relaxed.relaxedSimd, true);
    assert.equal(plain.relaxedSimd, false);
  });

  test('relaxedSimd: true with simd: false is an Error naming both', async () => {
    await assert.rejects(loadAttention({ simd: false, relaxedSimd: true }), {
      name: 'Error',
      message: /relaxedSimd: true needs the SIMD build, but simd: false was given/,
    });
  });

  test('relaxedSimd must be a boolean', async () => {
    await assert.rejects(loadAttention({ relaxedSimd: 'yes' }), {
      name: 'TypeError',
      message: "relaxedSimd: expected a boolean, got 'yes'",
    });
  });

  test(relaxedByDefault
    ? `without any flag, Node ${process.versions.node} takes the relaxed loops, computes, and accepts relaxedSimd: true`
    : 'without --experimental-wasm-relaxed-simd, Node 20 keeps the SIMD loops, computes, and refuses relaxedSimd: true', () => {
    const script = `
      import { loadAttention } from 'attention-wasm';
      const attn = await loadAttention();
      const x = { data: new Float32Array([1, 2, 3, 4]), shape: [1, 2, 2] };
      const { output } = attn.scaledDotProductAttention(x, x, x);
      const refused = await loadAttention({ relaxedSimd: true }).then(() => 'loaded', (e) => e.message);
      console.log(JSON.stringify({ backend: attn.backend, relaxedSimd: attn.relaxedSimd, output: [...output.data], refused }));`;
    const printed = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dirname(fileURLToPath(import.meta.url)),
      encoding: 'utf8',
    });
    const result = JSON.parse(printed);
    assert.equal(result.backend, 'wasm-simd');
    assert.equal(result.relaxedSimd, relaxedByDefault);
    // softmax([5, 11] / sqrt 2) and softmax([11, 25] / sqrt 2) pool the rows [1, 2] and [3, 4].
    const pooled = (s0, s1) => {
      const w1 = 1 / (1 + Math.exp((s0 - s1) / Math.SQRT2));
      return [1 + 2 * w1, 2 + 2 * w1];
    };
    const expected = [...pooled(5, 11), ...pooled(11, 25)];
    result.output.forEach((got, i) => assert.ok(Math.abs(got - expected[i]) < 1e-6, `output[${i}] ${got} vs ${expected[i]}`));
    if (relaxedByDefault) assert.equal(result.refused, 'loaded');
    else assert.match(result.refused, /relaxed SIMD was required \(relaxedSimd: true\) but this engine does not support it/);
  });
});

// With a = 1 + 2^-12, the query [1, a] against the key [-1, a] scores -1 + a^2 = 2^-11 + 2^-24:
// a multiply-add rounded once keeps the 2^-24, a product rounded before the add loses it. Scaled
// by 2^20 (exact), that is 2^9 + 2^-4 against 2^9; a second key [2^-11, 0] scores 2^9 exactly, so
// the weights are exactly [1/2, 1/2] without fusion and sigmoid(2^-4) = 0.5156 with it. (Relaxed
// madd is fused where the CPU has FMA, as every x86-64 machine this project runs on does; on one
// without, V8 may lower it to a multiply and an add, and these two tests would say so.)
describe('the relaxed loops compute the scores with fused multiply-add', () => {
  const a = 1 + 2 ** -12;
  const keys = { data: new Float32Array([-1, a, 2 ** -11, 0]), shape: [1, 2, 2] };
  const values = { data: new Float32Array([1, 0, 0, 1]), shape: [1, 2, 2] };
  const fusedWeight = 1 / (1 + Math.exp(-(2 ** -4)));
  for (const queries of [1, 2]) {
    test(`${queries}-row tiles`, () => {
      const q = { data: new Float32Array(Array.from({ length: queries }, () => [1, a]).flat()), shape: [1, queries, 2] };
      const run = (attn) => attn.scaledDotProductAttention(q, keys, values, { scale: 2 ** 20, weights: true }).weights.data;
      for (const w of run(plain)) assert.equal(w, 0.5);
      const got = run(relaxed);
      for (let i = 0; i < queries; ++i) {
        assert.ok(Math.abs(got[2 * i] - fusedWeight) < 1e-6, `weight ${got[2 * i]} vs ${fusedWeight}`);
        assert.ok(Math.abs(got[2 * i + 1] - (1 - fusedWeight)) < 1e-6);
      }
    });
  }
});

// The same sum through the GEMM loop (bmm, and so the projections, the backward and the GRU):
// [1, a] . [-1, a] is 2^-11 + 2^-24 fused, 2^-11 rounded twice; both are floats.
test('the relaxed GEMM loop computes with fused multiply-add', () => {
  const a = 1 + 2 ** -12;
  for (const rows of [1, 2, 3]) { // 1- and 2-row tiles
    const left = { data: new Float32Array(Array.from({ length: rows }, () => [1, a]).flat()), shape: [1, rows, 2] };
    const right = { data: new Float32Array([-1, a]), shape: [1, 2, 1] };
    assert.deepEqual([...plain.bmm(left, right).data], Array(rows).fill(2 ** -11));
    assert.deepEqual([...relaxed.bmm(left, right).data], Array(rows).fill(2 ** -11 + 2 ** -24));
  }
});

// Section ids of a wasm binary, in order.
function sectionIds(bytes) {
  const ids = [];
  let at = 8; // magic and version
  while (at < bytes.length) {
    ids.push(bytes[at++]);
    let size = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++];
      size |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
    at += size;
  }
  return ids;
}

for (const [file, shared] of [['attention-relaxed.mjs', false], ['attention-relaxed-mt.mjs', true]]) {
  test(`${file}: imports only the memory (${shared ? 'shared' : 'not shared'}), has no data, start or memory of its own`, async () => {
    const moduleUrl = new URL(`wasm/${file}`, pathToFileURL(fileURLToPath(import.meta.resolve('attention-wasm'))));
    const { default: base64 } = await import(moduleUrl);
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const module = new WebAssembly.Module(bytes);
    assert.deepEqual(WebAssembly.Module.imports(module), [{ module: 'env', name: 'memory', kind: 'memory' }]);
    // One function fills a kernel table with its loops, as indices of its exported table.
    assert.deepEqual(
      WebAssembly.Module.exports(module).map(({ name, kind }) => `${kind} ${name}`).sort(),
      ['function kernel_table', 'global __stack_pointer', 'table __indirect_function_table'],
    );
    const ids = sectionIds(bytes);
    for (const [id, what] of [[5, 'memory'], [8, 'start'], [11, 'data'], [12, 'data count']]) {
      assert.ok(!ids.includes(id), `a ${what} section (${id}) in ${ids}`);
    }
    // A module must declare its imported memory shared exactly when the main module's is.
    const memory = (isShared) => new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: isShared });
    assert.ok(new WebAssembly.Instance(module, { env: { memory: memory(shared) } }));
    assert.throws(() => new WebAssembly.Instance(module, { env: { memory: memory(!shared) } }), WebAssembly.LinkError);
  });
}
