// The package as users get it, through every bundler they may pick: one project depending on the
// packed tarball (packed and installed once) is bundled by Vite, webpack, Rollup and esbuild
// (tests/e2e/bundlers/, one file each, all from the one app in tests/e2e/consumer-app/), and
// each result (bundled once) runs in every engine of browser.js (Chromium, Firefox and WebKit)
// under a strict CSP, served cross-origin isolated (the threaded SIMD build and its workers) and
// not (one thread). Numbers are checked against a double-precision reference computed here; the
// bundlers must print no warning. Every file the package loads is fetched in one of the two runs
// (the threaded build's .wasm, worker script and glue in the first, the single-thread SIMD build
// in the second, the scalar build in both).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/serve.js';
import { TIGHT, assertClose, scaledDotProductAttention } from '../../harness/reference.js';
import { ENGINES, launchBrowser, watchErrors } from './browser.js';
import * as esbuild from './bundlers/esbuild.js';
import * as rollup from './bundlers/rollup.js';
import * as vite from './bundlers/vite.js';
import * as webpack from './bundlers/webpack.js';

const BUNDLERS = { vite, webpack, rollup, esbuild };
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const project = join(repo, 'build/bundler-consumer');
const dist = join(project, 'dist');
const servers = {};
const browsers = {};

// A user's project: the app, a package.json, and the packed package installed from its tarball.
function createProject() {
  rmSync(project, { recursive: true, force: true });
  mkdirSync(project, { recursive: true });
  cpSync(join(repo, 'tests/e2e/consumer-app'), project, { recursive: true });
  const pack = ['pack', '--ignore-scripts', '--silent', '--pack-destination', project];
  const tarball = execFileSync('npm', pack, { cwd: repo, encoding: 'utf8' }).trim().split('\n').pop();
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', `./${tarball}`], { cwd: project });
}

before(async () => {
  createProject();
  servers.isolated = await serve(dist);
  servers.plain = await serve(dist, 0, '127.0.0.1', { isolated: false });
  for (const engine of ENGINES) browsers[engine] = await launchBrowser(engine);
});

after(async () => {
  for (const browser of Object.values(browsers)) await browser.close();
  for (const server of Object.values(servers)) server.close();
});

// Opens a bundle's page in `engine` and returns what the app printed (consumer-app/app.js).
async function runPage(engine, name, isolated) {
  const page = await browsers[engine].newPage();
  const errors = watchErrors(page);
  try {
    await page.goto(`http://127.0.0.1:${servers[isolated ? 'isolated' : 'plain'].address().port}/${name}/`);
    await page.waitForFunction(() => document.getElementById('result').textContent !== 'loading');
    const text = await page.textContent('#result');
    assert.doesNotMatch(text, /^error/, text);
    assert.deepEqual(errors, []);
    return JSON.parse(text);
  } finally {
    await page.close();
  }
}

// The small call's weights are softmax([1, 0] / sqrt 2) per row (q = k = I2); the large one's
// output is the reference's, from the inputs the app reports.
function checkNumbers({ small, large }, inputs, label) {
  const a = 1 / (1 + Math.exp(-1 / Math.SQRT2));
  assertClose(small.weights, [a, 1 - a, 1 - a, a], { ...TIGHT, label: `${label} small weights` });
  const output = [10 * a + 30 * (1 - a), 20 * a + 40 * (1 - a), 10 * (1 - a) + 30 * a, 20 * (1 - a) + 40 * a];
  assertClose(small.output, output, { atol: 1e-4, rtol: 1e-5, label: `${label} small output` });
  const tensor = ({ data, shape }) => ({ data: Float32Array.from(data), shape });
  const want = scaledDotProductAttention(tensor(inputs.q), tensor(inputs.k), tensor(inputs.v), {
    validLens: Int32Array.from(inputs.validLens),
  });
  assertClose(tensor(large), want.output, { ...TIGHT, label: `${label} large output` });
}

// The default load is the threaded SIMD build on every core up to 8 where the page is isolated,
// the single-thread one where not; simd: false is the scalar build, which has no threads.
function checkLoads({ crossOriginIsolated, hardwareConcurrency, inputs, loads }, isolated) {
  assert.equal(crossOriginIsolated, isolated);
  const [auto, scalar] = loads;
  const threads = isolated ? Math.min(hardwareConcurrency, 8) : 1;
  let reason = isolated ? null : 'not cross-origin isolated';
  if (isolated && threads === 1) reason = "capped at the hardware's thread count";
  assert.deepEqual([auto.backend, auto.threads, auto.threadsReason], ['wasm-simd', threads, reason]);
  assert.deepEqual([scalar.backend, scalar.threads, scalar.threadsReason], ['wasm', 1, 'no SIMD (the threaded build is a SIMD build)']);
  for (const load of loads) checkNumbers(load, inputs, JSON.stringify(load.options));
}

for (const [name, bundler] of Object.entries(BUNDLERS)) {
  describe(name, () => {
    let bundled;
    before(async () => {
      bundled = await bundler.bundle(project, join(dist, name));
    });

    test('bundles without a warning', () => {
      assert.deepEqual(bundled.warnings, []);
    });

    // What the README says of each bundler: it emits the three .wasm builds (and with them the
    // worker script and glue) on its own, or none, and the copy step supplies them.
    test(bundler.needsCopy ? 'emits no .wasm file of its own' : 'emits the three .wasm files of its own', () => {
      const wasm = bundled.files.filter((file) => file.endsWith('.wasm'));
      assert.equal(wasm.length, bundler.needsCopy ? 0 : 3, `.wasm files: ${wasm.join(', ') || 'none'}`);
    });

    for (const engine of ENGINES) {
      for (const isolated of [true, false]) {
        test(`runs in ${engine} ${isolated ? 'cross-origin isolated, on threads' : 'not isolated, on one thread'}`, async () => {
          checkLoads(await runPage(engine, name, isolated), isolated);
        });
      }
    }
  });
}
