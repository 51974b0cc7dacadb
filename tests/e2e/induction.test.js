// Browser tests of section 7, "In-context learning: induction heads" (web/src/sections/induction/),
// in every engine of browser.js against the built site. The shipped model (web/public/models/
// induction.*, from scripts/train-induction-model.js) shows its run's curves, its phase change
// and every head at once, and continues a sequence by copying (the default and a typed one);
// ablating the layer-0 previous-token heads (a click) takes the layer-1 head's prefix matching
// and the copying away and goes into the URL; trained from scratch, the phase change comes within 60 s of
// training and the page says when (seed 3, the page's default; E2E_INDUCTION_SEEDS=1,2,3 trains
// each seed listed, one after the other). Screenshots go to build/screenshots/
// desktop-induction-*.png and phone-induction.png.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENGINES } from './browser.js';
import { PHONE, useBuiltSite } from './site.js';

const S = '#induction';
const plot = (name) => `[data-plot="ih-${name}"]`;
const dataset = (page) => page.$eval(S, (s) => ({ ...s.dataset }));
const waitState = (page, states, timeout = 40000) => page.waitForFunction(
  (list) => list.includes(document.getElementById('induction').dataset.trainState), states, { timeout },
);
// Each head's caption: "layer l · head h" then "prev x · prefix y".
const captions = (page) => page.$$eval(`${plot('heads')} .induction-heads figcaption`, (list) => list.map((c) => c.textContent));
const scoreOf = (caption, name) => Number(caption.match(new RegExp(`${name} (\\d\\.\\d\\d)`))[1]);
const SEEDS = (process.env.E2E_INDUCTION_SEEDS ?? '3').split(',').map(Number);

for (const engine of ENGINES) describe(`section 7: induction heads (${engine})`, () => {
  const site = useBuiltSite(engine, { hash: '#induction' });

  test('the shipped model: its phase change, every head, a continuation by copying, ablation in the URL', async () => {
    const { page, errors } = await site.open();
    assert.equal(await page.textContent('#induction-title'), '7 In-context learning: induction heads');
    await waitState(page, ['idle']);
    const shipped = await dataset(page);
    assert.equal(shipped.source, 'shipped');
    assert.ok(Number(shipped.phaseStep) > 0, 'the shipped run has a phase change');
    assert.match(await page.textContent(`${S} .train-stats`), /^The shipped model: idle, \d+ steps · phase change at step \d+/);
    await page.waitForSelector(`${plot('heads')} figure svg`);
    const before = await captions(page);
    assert.equal(before.length, 4);
    const prefix = Math.max(...before.slice(2).map((c) => scoreOf(c, 'prefix')));
    assert.ok(prefix >= 0.5, `a layer-1 head matches prefixes: ${before}`);
    // The default prompt repeats "Xq7": the model continues with what followed it, "bK2".
    await page.waitForSelector(`${S} .induction-continuation .generated`);
    assert.match(await page.textContent(`${S} .induction-continuation .generated`), /^bK2m/);
    // A sequence typed in: continued from its earlier occurrence, and kept in the URL.
    await page.fill(`${S} input[name="prompt"]`, 'AbCdEfAbC');
    await page.waitForFunction((sel) => /^dEf/.test(document.querySelector(sel)?.textContent ?? ''), `${S} .induction-continuation .generated`);
    await page.waitForFunction(() => location.search.includes('ih.prompt=AbCdEfAbC')); // written after 120 ms
    await page.screenshot({ path: site.shot('desktop-induction-shipped.png'), fullPage: true });

    // Ablate layer 0's previous-token heads: the layer-1 head loses its prefix matching.
    const previous = before.slice(0, 2).map((c) => scoreOf(c, 'prev'));
    const drawn = await page.$eval(`${plot('heads')} .plot`, (p) => p.innerHTML);
    for (const [h, score] of previous.entries()) if (score >= 0.5) await page.click(`${S} button[name="ablate-${h}"]`);
    await page.waitForFunction(([sel, html]) => document.querySelector(sel).innerHTML !== html
      && document.querySelectorAll(`${sel} figure.ablated`).length > 0, [`${plot('heads')} .plot`, drawn]);
    await page.waitForFunction(() => /with the ablated heads/.test(document.querySelector('#induction .train-stats').textContent));
    const after = await captions(page);
    const ablatedPrefix = Math.max(...after.slice(2).map((c) => scoreOf(c, 'prefix')));
    assert.ok(ablatedPrefix < 0.5 * prefix, `prefix matching ${ablatedPrefix} ablated vs ${prefix}`);
    // Generated without those heads, the typed sequence is no longer continued by copying.
    await page.waitForFunction((sel) => !/^dEf/.test(document.querySelector(sel)?.textContent ?? 'dEf'), `${S} .induction-continuation .generated`);
    assert.match(await page.evaluate(() => location.search), /ih\.mask=[01]{4}/);
    await page.screenshot({ path: site.shot('desktop-induction-ablated.png'), fullPage: false });
    assert.deepEqual(errors, []);
    await page.close();
  });

  for (const seed of SEEDS) test(`trains from scratch (seed ${seed}): the phase change within 60 s of training, and the page says when`, async () => {
    const { page, errors } = await site.open(`?ih.seed=${seed}`);
    await waitState(page, ['idle']);
    await page.click(`${S} button[name="start"]`);
    await waitState(page, ['training']);
    await page.waitForFunction(() => document.getElementById('induction').dataset.source === 'trained');
    await page.waitForFunction(() => document.getElementById('induction').dataset.phaseStep !== '', null, { timeout: 120000 });
    const { phaseStep, phaseSeconds } = await dataset(page);
    console.log(`${engine}, seed ${seed}: phase change at step ${phaseStep}, ${phaseSeconds} s of training`);
    assert.ok(Number(phaseSeconds) <= 60, `the phase change took ${phaseSeconds} s`);
    assert.match(await page.textContent(`${S} .train-stats`), new RegExp(`Seed ${seed}: .*phase change at step ${phaseStep}`));
    await page.click(`${S} button[name="pause"]`);
    await waitState(page, ['paused']);
    await page.screenshot({ path: site.shot(`desktop-induction-trained-${seed}.png`), fullPage: false });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('fits a phone’s width', async () => {
    const { page, errors } = await site.open('', PHONE);
    await waitState(page, ['idle']);
    await page.waitForSelector(`${plot('heads')} figure svg`);
    const overflow = await page.$eval(S, (s) => s.scrollWidth - s.clientWidth);
    assert.ok(overflow <= 1, `the section is ${overflow} px wider than the screen`);
    await page.screenshot({ path: site.shot('phone-induction.png'), fullPage: false });
    assert.deepEqual(errors, []);
    await page.close();
  });
});
