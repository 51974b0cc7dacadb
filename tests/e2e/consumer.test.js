// A Vite app that depends on the packed tarball builds, and runs in headless Chromium under a
// strict CSP, served cross-origin isolated: the package works through a bundler in a browser,
// the threaded SIMD build (its worker script emitted as a file) and the scalar one.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { serve } from '../../scripts/serve.js';
import { launchBrowser, watchErrors } from './browser.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const app = join(repo, 'build/vite-consumer');
let server;
let browser;

before(async () => {
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  cpSync(join(repo, 'tests/e2e/vite-consumer'), app, { recursive: true });
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', app], { cwd: repo, encoding: 'utf8' }).trim().split('\n').pop();
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', `./${tarball}`], { cwd: app });
  await build({ root: app, base: './', logLevel: 'warn', build: { outDir: join(app, 'dist'), target: 'es2022' } });
  server = await serve(join(app, 'dist'));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.close();
});

test('the bundle ships the .wasm files and the threaded build\'s worker script', () => {
  const assets = readdirSync(join(app, 'dist/assets'));
  assert.ok(assets.some((f) => /attention-simd-mt.*\.wasm$/.test(f)), `no threaded SIMD wasm in ${assets}`);
  assert.ok(assets.some((f) => /attention-scalar.*\.wasm$/.test(f)), `no scalar wasm in ${assets}`);
  assert.ok(assets.some((f) => /attention-simd-mt\.worker.*\.js$/.test(f)), `no worker script in ${assets}`);
});

test('a Vite-bundled page computes attention with both builds in Chromium', async () => {
  const page = await browser.newPage();
  const errors = watchErrors(page);
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => document.getElementById('result').textContent !== 'loading');
  const text = await page.textContent('#result');
  assert.doesNotMatch(text, /^error/, text);
  const results = JSON.parse(text);
  // Weights of q = k = I2 are softmax([1, 0] / sqrt 2) per row; computed here in double.
  const a = 1 / (1 + Math.exp(-1 / Math.SQRT2));
  const expectedWeights = [a, 1 - a, 1 - a, a];
  const expectedOutput = [10 * a + 30 * (1 - a), 20 * a + 40 * (1 - a), 10 * (1 - a) + 30 * a, 20 * (1 - a) + 40 * a];
  assert.deepEqual(Object.keys(results).sort(), ['wasm', 'wasm-simd']);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  assert.equal(results['wasm-simd'].threads, Math.min(cores, 8));
  assert.equal(results.wasm.threads, 1);
  for (const { output, weights } of Object.values(results)) {
    weights.forEach((w, i) => assert.ok(Math.abs(w - expectedWeights[i]) < 1e-6, `weights[${i}] ${w} vs ${expectedWeights[i]}`));
    output.forEach((o, i) => assert.ok(Math.abs(o - expectedOutput[i]) < 1e-4, `output[${i}] ${o} vs ${expectedOutput[i]}`));
  }
  assert.deepEqual(errors, []);
  await page.close();
});
