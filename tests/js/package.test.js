// The installed package (npm pack tarball) has what its package.json promises: the ES module
// entry with its four exports, the type declarations, both wasm builds, and the docs its README
// links to.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as api from 'attention-wasm';

const require = createRequire(import.meta.url);
const manifestPath = require.resolve('attention-wasm/package.json');
const root = dirname(manifestPath);
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));

test('the entry exports loadAttention, readSafetensors, simdSupported and writeSafetensors', () => {
  assert.deepEqual(Object.keys(api).sort(), ['loadAttention', 'readSafetensors', 'simdSupported', 'writeSafetensors']);
  for (const name of Object.keys(api)) assert.equal(typeof api[name], 'function', name);
});

test('the declared types file is in the package and declares the API', () => {
  const types = manifest.exports['.'].types ?? manifest.types;
  const file = join(root, types);
  assert.ok(existsSync(file), `${types} is missing from the tarball`);
  const text = readFileSync(file, 'utf8');
  for (const name of ['loadAttention', 'readSafetensors', 'simdSupported', 'MultiHeadAttention', 'scaledDotProductAttention']) {
    assert.match(text, new RegExp(`\\b${name}\\b`), name);
  }
});

test('both wasm builds and their glue are in the package', () => {
  for (const variant of ['simd', 'scalar']) {
    const wasm = fileURLToPath(import.meta.resolve(`attention-wasm/wasm/${variant}`));
    assert.ok(existsSync(wasm), wasm);
    assert.ok(existsSync(wasm.replace(/\.wasm$/, '.mjs')), `${variant} glue`);
  }
});

test('the docs/ files the README links to are in the package', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const docs = new Set([...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]));
  assert.ok(docs.size > 0, 'the README links to no docs/ file');
  for (const doc of docs) assert.ok(existsSync(join(root, doc)), `${doc} is missing from the tarball`);
});
