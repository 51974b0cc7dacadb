// The SIMD build really contains WebAssembly SIMD128 instructions and the scalar build none:
// the installed package's .wasm files are disassembled with binaryen's wasm-dis.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { simdSupported } from 'attention-wasm';

const WASM_DIS = process.env.WASM_DIS ?? '/usr/bin/wasm-dis';

// The files as the package exports them ("./wasm/simd", "./wasm/scalar").
const wasmPath = (variant) => fileURLToPath(import.meta.resolve(`attention-wasm/wasm/${variant}`));

function disassemble(path) {
  return execFileSync(WASM_DIS, [path], { encoding: 'utf8', maxBuffer: 512 * 2 ** 20 });
}

/** Counts of each SIMD128 instruction (v128.*, f32x4.*, i32x4.*, ...) in the text. */
function simdOps(text) {
  const counts = {};
  for (const [op] of text.matchAll(/\b(?:v128|[if](?:8x16|16x8|32x4|64x2))\.[a-z0-9_]+/g)) counts[op] = (counts[op] ?? 0) + 1;
  return counts;
}
const total = (counts) => Object.values(counts).reduce((a, b) => a + b, 0);

test(`simdSupported() is true in Node ${process.versions.node}`, () => {
  assert.equal(simdSupported(), true);
});

test('both .wasm files are exported by the package and validate here', () => {
  for (const variant of ['simd', 'scalar']) {
    const bytes = readFileSync(wasmPath(variant));
    assert.ok(WebAssembly.validate(bytes), `${variant} validates`);
  }
});

test('the SIMD build contains v128 / f32x4 instructions, including f32x4 arithmetic', () => {
  const counts = simdOps(disassemble(wasmPath('simd')));
  const v128AndF32x4 = Object.entries(counts).filter(([op]) => /^(v128|f32x4)\./.test(op)).reduce((a, [, n]) => a + n, 0);
  assert.ok(v128AndF32x4 > 0, `no v128 / f32x4 instructions in the SIMD build: ${JSON.stringify(counts)}`);
  const arithmetic = (counts['f32x4.mul'] ?? 0) + (counts['f32x4.add'] ?? 0);
  assert.ok(arithmetic > 0, `no f32x4.mul / f32x4.add in the SIMD build: ${JSON.stringify(counts)}`);
});

test('the scalar build contains no SIMD instruction at all', () => {
  const counts = simdOps(disassemble(wasmPath('scalar')));
  assert.equal(total(counts), 0, `SIMD instructions in the scalar build: ${JSON.stringify(counts)}`);
});
