// Browser tests of section 5, "Bahdanau attention: learning to align" (the page's bahdanau section,
// a configuration of web/src/sections/seq2seq/, and its training worker), in every engine of
// browser.js against the built site. The shipped Bahdanau model (web/public/models/, from
// scripts/train-page-model.js) must translate d2l's examples at once; a fresh run must learn
// (loss falls, the probe's heatmap changes, held-out BLEU reaches 0.8: the seconds it took are
// reported and written to build/screenshots/bahdanau.json); the model menu offers the GRU without
// attention beside it (the Transformer is section 6's: transformer.test.js); the comparison by
// source length trains and draws the three. Firefox's and WebKit's figures and screenshots land
// beside Chromium's, named firefox-* and webkit-*.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { ENGINES } from './browser.js';
import { seq2seqSection } from './seq2seq-section.js';
import { PHONE, useBuiltSite } from './site.js';

const {
  S, plot, dataset, trainState, waitState, drawing, waitRedrawn, translate, openShipped, assertTaskAndSeedInUrl,
  assertNothingWider, assertPhoneLayout,
} = seq2seqSection('bahdanau', 'bd');
const probe = `${plot('probe')} .plot`;
// The names the comparison's legend, status line and caption give its three models.
const NAMES = { bahdanau: 'Bahdanau', transformer: 'Transformer', plain: 'no attention' };

for (const engine of ENGINES) describe(`section 5: Bahdanau attention (${engine})`, () => {
  const site = useBuiltSite(engine, { hash: '#bahdanau' });
  const { open } = site;

  test('the shipped Bahdanau model translates d2l’s examples at once and flags unknown words', async () => {
    const { page, errors } = await openShipped(site, '5 Bahdanau attention: learning to align');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the model menu offers Bahdanau’s GRU and the GRU without attention, which has no alignment to draw', async () => {
    // A link from before the Transformer had a section of its own falls back to Bahdanau.
    const { page, errors } = await open('?bd.model=transformer');
    await waitState(page, ['idle']);
    assert.deepEqual(await page.$$eval(`${S} select[name="model"] option`, (o) => o.map((x) => x.value)), ['bahdanau', 'plain']);
    assert.equal(await page.inputValue(`${S} select[name="model"]`), 'bahdanau');
    assert.equal(await page.$(plot('heads')), null, 'no heads card: that is section 6');
    await page.selectOption(`${S} select[name="model"]`, 'plain');
    await page.waitForFunction(() => location.search.includes('bd.model=plain'));
    await waitState(page, ['idle']);
    // It ships none: untrained weights, and no heatmap.
    await page.waitForFunction((sel) => /no attention/.test(document.querySelector(sel)?.textContent), `${plot('probe')} .plot`);
    assert.match(await page.textContent(`${S} .train-stats`), /^this run: held-out BLEU/);
    // Nothing trained yet on the page: the BLEU chart says which run it would draw beside. (The
    // curves redraw from another of the worker's reports than the probe, which can come later.)
    await page.waitForFunction((sel) => /No run of “Bahdanau \(GRU \+ attention\)” on this page for this task yet/
      .test(document.querySelector(sel)?.textContent ?? ''), `${plot('bleu')} .missing-runs`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('training from scratch: the loss falls, the heatmap changes, BLEU reaches 0.8 (seconds reported)', async (t) => {
    const { page, errors } = await open();
    await waitState(page, ['idle']);
    await page.waitForSelector(`${probe} svg`);
    const shippedProbe = await drawing(page, probe);
    const started = Date.now();
    await page.click(`${S} button[name="start"]`);
    await waitState(page, ['running']);
    // Untrained: the probe's heatmap is redrawn from the fresh model.
    await waitRedrawn(page, probe, shippedProbe);
    const early = await drawing(page, probe);
    await page.waitForFunction(() => Number(document.getElementById('bahdanau').dataset.bleu) >= 0.8
      || document.getElementById('bahdanau').dataset.trainState === 'done', null, { timeout: 120000 });
    const wall = (Date.now() - started) / 1000;
    const data = await dataset(page);
    const curve = JSON.parse(data.bleuCurve);
    t.diagnostic(`held-out BLEU by training seconds: ${curve.map(([s, b, n]) => `${s} s (step ${n}): ${b}`).join(', ')}`);
    t.diagnostic(`BLEU ${data.bleu} at ${data.bleuSeconds} s of training (${wall.toFixed(1)} s wall clock from the click)`);
    await writeFile(site.shot('bahdanau.json'), `${JSON.stringify({ reached: Number(data.bleu), seconds: Number(data.bleuSeconds), wallSeconds: wall, curve }, null, 2)}\n`);
    assert.ok(Number(data.bleu) >= 0.8, `held-out BLEU only reached ${data.bleu}`);
    assert.ok(Number(data.loss) < 0.5 * Number(data.firstLoss), `loss ${data.firstLoss} -> ${data.loss}`);
    await waitRedrawn(page, probe, early);
    assert.ok(await page.$(`${plot('loss')} g[aria-label="line"]`), 'loss curve drawn');
    assert.match(await page.textContent(`${S} .train-stats`), /tokens\/s/);
    // Pause, translate while paused, resume.
    await page.click(`${S} button[name="pause"]`);
    await waitState(page, ['paused', 'done']);
    if (await trainState(page) === 'paused') {
      // The half-trained model answers while paused (what it says depends on the run).
      assert.ok((await translate(page, 'he is tired .')).length > 0);
      await page.click(`${S} button[name="resume"]`);
      await waitState(page, ['running', 'done']);
    }
    await page.locator(S).screenshot({ path: site.shot('desktop-bahdanau-training.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  // The comparison trains Bahdanau's GRU, the Transformer and the GRU without attention side by
  // side. Chromium checks, on the full five epochs from the default seed, that the better of
  // the two attention models leads the one without by 0.2 BLEU on held-out sources of 20 words
  // or more (the figures and the comparison's wall time go to bahdanau-compare.json); another
  // engine trains one epoch each, which checks that the three train and are drawn there. Both
  // then draw the figure at a phone's width.
  const full = engine === 'chromium';
  test(full
    ? 'three models by source length, from the default seed: the better attention model leads no attention by 0.2 BLEU from 20 words'
    : 'three models by source length, one epoch each: all three trained and drawn', async (t) => {
    const { page, errors } = await open(full ? '' : '?bd.cmp=1');
    await waitState(page, ['idle']);
    assert.equal(await page.textContent(`${S} button[name="compare"]`), 'Train all three');
    const started = Date.now();
    await page.click(`${S} button[name="compare"]`);
    await page.waitForFunction(() => document.getElementById('bahdanau').dataset.compared === 'true', null, { timeout: 300000 })
      .catch(async (error) => {
        // How far it got: the status line counts the epochs, the state says whether the worker still compares.
        const status = await page.textContent(`${S} .compare-status`).catch((e) => `(unread: ${e.message})`);
        error.message += `; the status line then: "${status}", the worker's state ${(await dataset(page)).trainState}`;
        throw error;
      });
    const wallSeconds = (Date.now() - started) / 1000;
    const chart = `${plot('compare')} .plot`;
    assert.equal(await page.$$eval(`${chart} g[aria-label="line"]`, (g) => g.length), 3);
    // Plot names its legend's items `${className}-swatch`, its class name a generated plot-….
    const legend = await page.$$eval(`${chart} [class^="plot-"][class$="-swatch"]`, (s) => s.map((x) => x.textContent));
    assert.deepEqual(legend, Object.values(NAMES));
    const status = await page.textContent(`${S} .compare-status`);
    assert.match(status, /^After \d+ epochs? each \(\d+ steps\): held-out BLEU from 20 words on \d\.\d{3} Bahdanau, \d\.\d{3} Transformer, \d\.\d{3} no attention; over all lengths/);
    const long = JSON.parse((await dataset(page)).compareLong);
    assert.deepEqual(Object.keys(long), ['bahdanau', 'transformer', 'plain']);
    const lead = Math.max(long.bahdanau, long.transformer) - long.plain;
    t.diagnostic(`held-out BLEU at 20 words or more: ${long.bahdanau.toFixed(3)} Bahdanau, ${long.transformer.toFixed(3)} Transformer, ${long.plain.toFixed(3)} without attention (${wallSeconds.toFixed(1)} s wall clock from the click)`);
    t.diagnostic(status);
    await writeFile(site.shot('bahdanau-compare.json'), `${JSON.stringify({ ...long, wallSeconds }, null, 2)}\n`);
    // The sentence under the figure names this run's leader among the three.
    const leader = Object.entries(long).sort(([, a], [, b]) => b - a)[0][0];
    assert.match(await page.textContent(`${plot('compare')} .compare-caption`), new RegExp(`20 words or more, ${NAMES[leader]} leads`));
    if (full) assert.ok(lead >= 0.2, `attention leads by ${lead.toFixed(3)}`);
    await page.locator(plot('compare')).screenshot({ path: site.shot('desktop-bahdanau-compare.png') });
    // At a phone's width the page redraws the figure to fit.
    const desktop = await drawing(page, chart);
    await page.setViewportSize(PHONE);
    await waitRedrawn(page, chart, desktop);
    await page.mouse.move(0, 0); // off the plot, whose tip would otherwise cover the lines it points at
    await assertNothingWider(page);
    await page.locator(plot('compare')).screenshot({ path: site.shot('phone-bahdanau-compare.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('task and seed live in the URL; the dates task ships a model too', () => assertTaskAndSeedInUrl(open, async (page) => {
    assert.equal(await translate(page, 'november 22, 2026'), '2 0 2 6 - 1 1 - 2 2');
  }));

  test('phone layout: nothing wider than the screen', () => assertPhoneLayout(open, '', { shot: site.shot, name: 'bahdanau' }));
});
