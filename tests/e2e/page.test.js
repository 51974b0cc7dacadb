// End-to-end tests of the page, in every engine of browser.js (Chromium, Firefox and WebKit).
// They build nothing: scripts/build.sh must have left the static site in build/site/.
// Screenshots (desktop and phone) and the measured per-update compute times go to
// build/screenshots/ for review, Firefox's and WebKit's beside Chromium's (site.js, shotPath).
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { serve } from '../../scripts/serve.js';
import { ENGINES, relaxedSimd, watchErrors } from './browser.js';
import { DESKTOP, PHONE, SITE, useBuiltSite } from './site.js';

// Every section in the page's order (its number is its place here), and its nav entry.
const SECTIONS = [
  ['qkv', 'Queries, keys, values'],
  ['kernel-regression', 'Kernel regression'],
  ['scoring', 'Scoring functions'],
  ['multi-head', 'Self-, cross- & multi-head'],
  ['bahdanau', 'Learning to align'],
  ['transformer', 'The Transformer'],
  ['induction', 'Induction heads'],
  ['benchmark', 'Benchmark'],
];
// The sections whose own test files take their screenshots, once trained (bahdanau.test.js,
// transformer.test.js, induction.test.js).
const SHOT_ELSEWHERE = new Set(['bahdanau', 'transformer', 'induction']);
const BUDGET_MS = 16;

// The number of updates a section has run (data-updates), to wait for the next one.
const updates = (page, id) => page.$eval(`#${id}`, (s) => Number(s.dataset.updates ?? 0));
const nextUpdate = (page, id, after) =>
  page.waitForFunction(([sid, n]) => Number(document.getElementById(sid).dataset.updates) > n, [id, after]);
const plotHtml = (page, name) => page.$eval(`[data-plot="${name}"] .plot`, (p) => p.innerHTML);

// The built site copied into `folder` of a temporary root, with `extra` files ({ name: text })
// beside its index.html, and served cross-origin isolated; returns { url, close }.
async function serveCopy(folder, extra = {}) {
  const root = await mkdtemp(join(tmpdir(), 'attention-site-'));
  const copy = join(root, folder);
  await cp(SITE, copy, { recursive: true });
  for (const [name, text] of Object.entries(extra)) await writeFile(join(copy, name), text);
  const server = await serve(root, 0);
  return {
    url: `http://127.0.0.1:${server.address().port}/${folder ? `${folder}/` : ''}`,
    async close() {
      server.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

// Presses a key on a slider and waits for the section to redraw. The slider keeps the focus
// between presses, so they go to the keyboard (finding the element again for each press costs
// Firefox's WebDriver BiDi a round trip of ~0.1 s).
async function press(page, section, inputName, key, times = 1) {
  await page.focus(`#${section} input[name="${inputName}"]`);
  for (let i = 0; i < times; i++) {
    const n = await updates(page, section);
    await page.keyboard.press(key);
    await nextUpdate(page, section, n);
  }
}

// In the page: steps slider `input` of `section` up and down ten times as arrow keys do (the
// value, then an input event), each after the section's previous update, and returns the compute
// and draw times the section reported for each step. A step that no update follows within 5 s
// ends the run early (the caller counts the steps).
async function stepAndTime([section, input]) {
  const root = document.getElementById(section);
  const slider = root.querySelector(`input[name="${input}"]`);
  const updated = (after) => new Promise((resolve) => {
    const started = performance.now();
    const poll = () => {
      if (Number(root.dataset.updates ?? 0) > after) resolve(true);
      else if (performance.now() - started > 5000) resolve(false);
      else requestAnimationFrame(poll);
    };
    poll();
  });
  const times = [], draws = [];
  for (let i = 0; i < 10; i++) {
    const before = Number(root.dataset.updates ?? 0);
    if (i % 2) slider.stepDown();
    else slider.stepUp();
    slider.dispatchEvent(new Event('input', { bubbles: true }));
    if (!(await updated(before))) break;
    times.push(Number(root.dataset.computeMs));
    draws.push(Number(root.dataset.drawMs));
  }
  return { times, draws };
}

for (const engine of ENGINES) describe(`the page (${engine})`, () => {
  const site = useBuiltSite(engine);
  const { open } = site;

  test('loads with no console errors and names its backend', async () => {
    const { page, errors } = await open();
    // The SIMD build, with its relaxed loops where the engine validates relaxed SIMD (browser.js).
    const relaxed = relaxedSimd(engine);
    assert.equal(await page.textContent('#backend'), relaxed ? 'wasm-simd + relaxed' : 'wasm-simd');
    assert.equal(await page.getAttribute('#backend', 'data-backend'), 'wasm-simd');
    assert.equal(await page.getAttribute('#backend', 'data-relaxed-simd'), String(relaxed));
    await page.waitForTimeout(200);
    assert.deepEqual(errors, []);
    await page.close();
  });

  // A reader of the first sections does not pay for sections 5 and 6's training workers (each
  // loads the package on every core and a shipped model, and scores it held out): a section
  // starts its worker when it comes within a screen of the viewport. At the top, the page's
  // resource timing lists no worker script fetched and no section has heard from its worker (it
  // says 'loading' until the worker reports); near each, the worker reports it is idle. (WebKit
  // 2.50 leaves the second of two worker scripts fetched at about the same time out of resource
  // timing now and then, so the list does not prove a start.)
  test('the training workers start only as the reader nears their sections', async () => {
    const { page, errors } = await open();
    const workerScripts = () => page.evaluate(() => performance.getEntriesByType('resource')
      .filter((entry) => /\/train-worker-[^/]*\.js$/.test(entry.name)).length);
    const trainStates = () => page.evaluate(() => ['bahdanau', 'transformer'].map((id) => document.getElementById(id).dataset.trainState));
    await page.waitForTimeout(1000);
    assert.equal(await workerScripts(), 0, 'none fetched at the top of the page');
    assert.deepEqual(await trainStates(), ['loading', 'loading'], 'no worker reported at the top of the page');
    for (const id of ['bahdanau', 'transformer']) {
      await page.evaluate((sid) => document.getElementById(sid).scrollIntoView(), id);
      await page.waitForFunction((sid) => document.getElementById(sid).dataset.trainState === 'idle', id, { timeout: 40000 });
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the nav lists every section in order, numbered as its heading', async () => {
    const { page, errors } = await open();
    const nav = await page.$$eval('nav a', (links) => links.map((a) => [a.getAttribute('href'), a.textContent]));
    assert.deepEqual(nav, SECTIONS.map(([id, name], i) => [`#${id}`, `${i + 1} · ${name}`]));
    const headings = await page.$$eval('main > section', (sections) => sections.map((s) => [s.id, s.querySelector('h2 .section-number')?.textContent]));
    assert.deepEqual(headings, SECTIONS.map(([id], i) => [id, String(i + 1)]));
    assert.deepEqual(errors, []);
    await page.close();
  });

  // The browser jumps to #id before the sections are built; the page jumps again and holds the
  // section there while the ones above it finish drawing (WebKit has no scroll anchoring).
  test('a link to a section lands on it once the page has drawn', async () => {
    const { page, errors } = await open('#induction');
    await page.waitForTimeout(2000);
    const top = await page.evaluate(() => document.getElementById('induction').getBoundingClientRect().top);
    const margin = await page.evaluate(() => parseFloat(getComputedStyle(document.getElementById('induction')).scrollMarginTop));
    assert.ok(Math.abs(top - margin) <= 2, `#induction's top is ${top} px from the window's, not ${margin}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('every section renders its plots', async () => {
    const { page, errors } = await open();
    const plots = [
      'store', 'weights', 'fit', 'heatmap', 'kernels', 'loo', 'plane', 'score-bars', 'hist-raw',
      'hist-scaled', 'softmax-d', 'saturation', 'mask-scores', 'mask-weights', 'lines', 'cross-same',
      'cross-random',
    ];
    // Counted in one round trip: each costs Firefox's WebDriver BiDi about 0.15 s.
    const counts = await page.evaluate(([names, ids]) => ({
      svgs: Object.fromEntries(names.map((name) => [name, document.querySelectorAll(`[data-plot="${name}"] svg`).length])),
      heads: document.querySelectorAll('[data-plot="heads"] figure[data-head]').length,
      cells: document.querySelector('[data-head="prev"] g[aria-label="cell"]')?.children.length,
      math: Object.fromEntries(ids.map((id) => [id, Boolean(document.querySelector(`#${id} .katex`))])),
    }), [plots, SECTIONS.map(([id]) => id)]);
    for (const name of plots) assert.ok(counts.svgs[name] > 0, `plot ${name} has an svg`);
    // 4 designed heads + 4 random heads by default, each a heatmap of 14 × 14 cells.
    assert.equal(counts.heads, 8);
    assert.equal(counts.cells, 14 * 14);
    // Math is typeset.
    for (const [id] of SECTIONS) assert.ok(counts.math[id], `section ${id} has typeset math`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('moving a slider changes its plot', async () => {
    const { page, errors } = await open();
    const cases = [
      ['qkv', 'query', 'store'],
      ['qkv', 'temperature', 'weights'],
      ['kernel-regression', 'bandwidth', 'fit'],
      ['kernel-regression', 'bandwidth', 'heatmap'],
      ['scoring', 'query-angle', 'score-bars'],
      ['scoring', 'dimension', 'hist-raw'],
      ['scoring', 'valid-length-1', 'mask-weights'],
      ['multi-head', 'seed', 'heads'],
    ];
    for (const [section, input, plot] of cases) {
      const before = plot === 'heads'
        ? await page.$eval('[data-head="r0"]', (f) => f.innerHTML)
        : await plotHtml(page, plot);
      await press(page, section, input, 'ArrowRight');
      const afterHtml = plot === 'heads'
        ? await page.$eval('[data-head="r0"]', (f) => f.innerHTML)
        : await plotHtml(page, plot);
      assert.notEqual(afterHtml, before, `${section}: moving ${input} changes ${plot}`);
    }
    // A select and a checkbox too: the kernel and the classification mode.
    const fit = await plotHtml(page, 'fit');
    await page.selectOption('#kernel-regression select[name="kernel"]', 'epanechnikov');
    await page.waitForFunction((html) => document.querySelector('[data-plot="fit"] .plot').innerHTML !== html, fit);
    assert.equal(await page.isHidden('[data-plot="classes"]'), true);
    await page.check('#kernel-regression input[name="classification"]');
    await page.waitForSelector('[data-plot="classes"] svg');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('dragging a training point moves the fit; hovering the heatmap shows a query', async () => {
    const { page, errors } = await open();
    const fitPath = () => page.$eval('[data-plot="fit"] g[aria-label="line"][stroke="#d6452b"] path', (p) => p.getAttribute('d'));
    await page.locator('[data-plot="fit"]').scrollIntoViewIfNeeded();
    const dot = await page.$eval('[data-plot="fit"] g[aria-label="dot"] circle:nth-child(20)', (c) => {
      const box = c.getBoundingClientRect();
      return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    });
    const before = await fitPath();
    await page.mouse.move(dot.x, dot.y);
    await page.mouse.down();
    await page.mouse.move(dot.x + 5, dot.y - 60, { steps: 6 });
    await page.mouse.up();
    await page.waitForFunction((d) => {
      const path = document.querySelector('[data-plot="fit"] g[aria-label="line"][stroke="#d6452b"] path');
      return path && path.getAttribute('d') !== d;
    }, before);
    assert.notEqual(await fitPath(), before, 'the prediction line moved');
    await page.waitForFunction(() => location.search.includes('kr.moved='));

    const heat = await page.locator('[data-plot="heatmap"] svg').boundingBox();
    await page.mouse.move(heat.x + heat.width / 2, heat.y + heat.height / 2);
    await page.waitForFunction(() => document.querySelector('[data-plot="fit"] .plot-note').textContent.startsWith('query q ='));
    assert.ok(await page.$('[data-plot="heatmap"] g[stroke="#e4572e"]'), 'hovered row outlined');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('ships a strict CSP that blocks eval and inline scripts', async () => {
    // Code that the driver evaluates is exempt from CSP, so the probes run as page scripts: one
    // served from the page's origin (allowed by 'self') that tries eval and new Function, and
    // one inline script (not allowed at all).
    const copy = await serveCopy('', {
      'csp-probe.js': `const tryIt = (f) => { try { f(); return 'ran'; } catch (error) { return error.name; } };
        window.__csp = { eval: tryIt(() => eval('1 + 1')), Function: tryIt(() => new Function('return 1')()) };`,
    });
    const page = await site.browser.newPage();
    try {
      await page.goto(copy.url);
      await page.waitForSelector('body[data-ready="true"]');
      const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
      assert.ok(csp, 'CSP meta tag present');
      assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
      assert.doesNotMatch(csp, /'unsafe-eval'/);
      assert.doesNotMatch(csp, /script-src[^;]*'unsafe-inline'/);
      const outcome = await page.evaluate(() => new Promise((done) => {
        const inline = document.createElement('script');
        inline.textContent = 'window.__inline = true';
        document.head.append(inline);
        const probe = document.createElement('script');
        probe.src = './csp-probe.js';
        probe.onload = () => done({ ...window.__csp, inline: window.__inline ?? false });
        probe.onerror = () => done('probe failed to load');
        document.head.append(probe);
      }));
      assert.deepEqual(outcome, { eval: 'EvalError', Function: 'EvalError', inline: false });
    } finally {
      await page.close();
      await copy.close();
    }
  });

  test('URL state round-trips', async () => {
    const { page, errors } = await open();
    await page.click('#qkv button[name="preset-one-hot"]');
    await page.selectOption('#kernel-regression select[name="kernel"]', 'boxcar');
    await press(page, 'scoring', 'valid-length-2', 'ArrowLeft', 2);
    await page.fill('#multi-head input[name="sentence"]', 'a cat saw a dog');
    await page.selectOption('#multi-head select[name="heads"]', '2');
    await page.waitForFunction(() => location.search.includes('mh.h=2'));
    const url = page.url();
    assert.match(url, /qkv\.T=0\.01/);
    const share = await page.getAttribute('#kernel-regression .share-link', 'href');
    assert.match(share, /kr\.kernel=boxcar/);
    assert.match(share, /#kernel-regression$/);

    const { page: again, errors: errors2 } = await open(url.slice(site.base.length));
    // Read in one round trip (each costs Firefox's WebDriver BiDi about 0.15 s).
    const state = await again.evaluate(() => {
      const value = (selector) => document.querySelector(selector).value;
      return {
        temperature: value('#qkv input[name="temperature"]'),
        readout: document.querySelector('#qkv .readout').textContent,
        kernel: value('#kernel-regression select[name="kernel"]'),
        validLength: value('#scoring input[name="valid-length-2"]'),
        sentence: value('#multi-head input[name="sentence"]'),
        tokens: document.querySelectorAll('#multi-head .tokens span').length,
        heads: document.querySelectorAll('[data-plot="heads"] figure[data-head]').length,
      };
    });
    assert.equal(state.temperature, String(Math.log10(0.01)));
    assert.match(state.readout, /one-hot/);
    assert.equal(state.kernel, 'boxcar');
    assert.equal(state.validLength, '4');
    assert.equal(state.sentence, 'a cat saw a dog');
    assert.equal(state.tokens, 5);
    assert.equal(state.heads, 4 + 2);
    assert.deepEqual([...errors, ...errors2], []);
    await page.close();
    await again.close();
  });

  // Speed is for measuring, not for asserting (a timed test flakes on a busy machine): this test
  // checks that every slider update is timed by the page, and reports the figures against the
  // 16 ms frame budget as diagnostics and in build/screenshots/timings.json.
  test('every slider update reports its compute time (figures vs the 16 ms budget)', async (t) => {
    const { page } = await open();
    const sliders = [
      ['qkv', 'query'], ['qkv', 'temperature'],
      ['kernel-regression', 'bandwidth'],
      ['scoring', 'query-angle'], ['scoring', 'dimension'], ['scoring', 'valid-length-1'],
      ['multi-head', 'seed'], ['multi-head', 'input-scale'],
    ];
    const figures = {};
    for (const [section, input] of sliders) {
      // Up and down by one step, ten times, inside the page: every step is an update (none hits
      // the end). The steps are the input events a key press sends (the test above presses real
      // keys); driving them from the page spares a WebDriver round trip per step, which made
      // this test 4x slower in Firefox than in Chromium.
      const { times, draws } = await page.evaluate(stepAndTime, [section, input]);
      const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
      figures[`${section}/${input}`] = {
        computeMedianMs: median(times), computeMaxMs: Math.max(...times), drawMedianMs: median(draws),
      };
      assert.equal(times.length, 10, `${section}/${input}: ${times.length} of 10 steps updated the section`);
      assert.ok(times.every((ms) => Number.isFinite(ms) && ms >= 0), `${section}/${input}: compute times ${times}`);
    }
    for (const [name, f] of Object.entries(figures)) {
      const verdict = f.computeMaxMs < BUDGET_MS ? 'within' : 'OVER';
      t.diagnostic(`${name}: compute median ${f.computeMedianMs} ms, max ${f.computeMaxMs} ms (${verdict} the ${BUDGET_MS} ms budget); draw median ${f.drawMedianMs} ms`);
    }
    await writeFile(site.shot('timings.json'), `${JSON.stringify(figures, null, 2)}\n`);
    await page.close();
  });

  test('the built site works from any folder (relative paths)', async () => {
    const copy = await serveCopy('some/folder');
    const page = await site.browser.newPage();
    const errors = watchErrors(page);
    try {
      await page.goto(`${copy.url}?qkv.q=2`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
      assert.match(await page.textContent('#backend'), /^wasm/);
      assert.equal(await page.inputValue('#qkv input[name="query"]'), '2');
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
      await copy.close();
    }
  });

  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    test(`screenshot at ${name} width (${viewport.width}×${viewport.height}) with nothing wider than the screen`, async () => {
      const { page, errors } = await open('', viewport);
      await page.evaluate(() => document.fonts.ready);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `page is ${overflow}px wider than the viewport`);
      await page.screenshot({ path: site.shot(`page-${name}.png`), fullPage: true });
      for (const [id] of SECTIONS.filter(([sid]) => !SHOT_ELSEWHERE.has(sid))) {
        await page.locator(`#${id}`).screenshot({ path: site.shot(`${name}-${id}.png`) });
      }
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});
