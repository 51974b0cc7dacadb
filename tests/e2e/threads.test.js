// The page on threads: served cross-origin isolated (as `npm start` serves it) it computes on
// more than one thread and draws exactly what it draws on one thread (the package's results are
// the same bits for every thread count); served without the headers it runs on one thread, says
// why, and every section still works.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENGINES } from './browser.js';
import { useBuiltSite } from './site.js';

// Plots whose every number comes from the package (no timings in them).
const PLOTS = ['store', 'weights', 'fit', 'heatmap', 'loo', 'score-bars', 'mask-weights', 'lines', 'cross-same'];
const plotsOf = async (page) => (await Promise.all(PLOTS.map((name) => page.$eval(`[data-plot="${name}"] .plot`, (p) => p.innerHTML))))
  .map(withoutDebugChunks);

// The heatmap is a canvas's PNG (toDataURL) inside the SVG. Firefox 153 writes a private chunk
// 'deBG' holding 16 random hex digits into every PNG it encodes, so two encodings of the same
// pixels differ there (seen for two encodings on one page, too); the pixels are what the threads
// must not change, so the chunk is dropped before comparing. Chromium writes no such chunk.
function withoutDebugChunks(html) {
  return html.replace(/data:image\/png;base64,([A-Za-z0-9+/=]+)/g, (_, base64) => {
    const png = Buffer.from(base64, 'base64');
    const kept = [png.subarray(0, 8)]; // the signature, then chunks: length, type, data, CRC
    for (let at = 8; at < png.length;) {
      const end = at + 12 + png.readUInt32BE(at);
      if (png.toString('latin1', at + 4, at + 8) !== 'deBG') kept.push(png.subarray(at, end));
      at = end;
    }
    return `data:image/png;base64,${Buffer.concat(kept).toString('base64')}`;
  });
}

for (const engine of ENGINES) describe(`the page on threads (${engine})`, () => {
  const isolated = useBuiltSite(engine);
  const plain = useBuiltSite(engine, { isolated: false });

  test('served with COOP/COEP: cross-origin isolated, on every core up to 8, drawing what one thread draws', async () => {
    const { page, errors } = await isolated.open();
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    const threads = Number(await page.getAttribute('#threads', 'data-threads'));
    assert.equal(threads, Math.min(cores, 8));
    assert.ok(threads > 1, 'this machine has more than one core');
    assert.equal(await page.getAttribute('#threads', 'data-reason'), '');
    assert.equal(await page.textContent('#threads'), `${threads} threads`);
    // Isolated, the clock is fine (5 µs in Chromium 156, 20 µs in Firefox ESR 153 and WebKitGTK
    // 2.50): the page's usual two decimals stand (see the last test).
    const clockMs = Number(await page.getAttribute('#qkv', 'data-clock-ms'));
    assert.ok(clockMs <= 0.02, `clock step ${clockMs} ms`);

    const { page: onePage, errors: oneErrors } = await plain.open();
    assert.deepEqual(await plotsOf(page), await plotsOf(onePage));
    assert.deepEqual(errors, []);
    assert.deepEqual(oneErrors, []);
    await page.close();
    await onePage.close();
  });

  test('served without them: one thread, the reason shown, every section drawn', async () => {
    const { page, errors } = await plain.open();
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    assert.equal(await page.getAttribute('#threads', 'data-threads'), '1');
    assert.equal(await page.getAttribute('#threads', 'data-reason'), 'not cross-origin isolated');
    assert.equal(await page.textContent('#threads'), '1 thread (not cross-origin isolated)');
    for (const name of [...PLOTS, 'kernels', 'plane', 'hist-raw', 'softmax-d', 'saturation', 'cross-random']) {
      assert.ok(await page.$(`[data-plot="${name}"] svg`), `plot ${name} has an svg`);
    }
    assert.equal(await page.$$eval('[data-plot="heads"] figure[data-head]', (f) => f.length), 8);
    assert.deepEqual(errors, []);
    await page.close();
  });

  // Without cross-origin isolation the engines coarsen performance.now() (measured: Chromium 156
  // to 0.1 ms, Firefox ESR 153 and WebKitGTK 2.50 to whole milliseconds, against 5 and 20 µs
  // isolated), so the page shows its times no finer than its clock (web/shared/clock.js) and the
  // benchmark lengthens its samples to 100 steps of it where that is longer than its usual 30 ms
  // (Firefox's and WebKit's 100 ms).
  test('served without them: times shown no finer than the clock, benchmark samples long enough for it', async (t) => {
    const { page, errors } = await plain.open('?bench.n=16');
    const clockMs = Number(await page.getAttribute('#qkv', 'data-clock-ms'));
    t.diagnostic(`${engine}, not isolated: performance.now() steps by ${clockMs} ms`);
    assert.ok(clockMs >= 0.1, `clock step ${clockMs} ms`);
    const backed = Math.max(0, -Math.floor(Math.log10(clockMs) + 1e-9));
    for (const text of await page.$$eval('.timing', (all) => all.map((e) => e.textContent))) {
      for (const [figure, under, decimals = ''] of text.matchAll(/in (< )?\d+(?:\.(\d+))? ms/g)) {
        assert.ok(decimals.length <= Math.min(2, backed), `${figure}: more digits than a ${clockMs} ms clock backs`);
        assert.ok(under || !/^in 0(\.0+)? ms$/.test(figure), `${figure}: a time under one clock step reads as zero`);
      }
    }
    await page.click('#benchmark button[name="run-benchmark"]');
    await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('benchmark').dataset.benchState),
      null, { timeout: 60000 });
    const status = await page.textContent('#benchmark .bench-status');
    if (100 * clockMs > 30) {
      assert.match(status, new RegExp(`clock steps by ${clockMs} ms here, so every sample lasted at least ${100 * clockMs} ms \\(not 30\\)`));
    } else {
      assert.doesNotMatch(status, /clock steps by/);
    }
    assert.match(status, /Every output agrees with plain JS/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
