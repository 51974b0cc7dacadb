// What the browser tests of the page's two seq2seq sections share (bahdanau.test.js for section 5,
// transformer.test.js for section 6): both are configurations of web/src/sections/seq2seq/, so
// they are driven alike, by the section's id and its cards' prefix (bd, tf). The section keeps
// its worker's state and the current model's figures on its dataset (trainState, bleu,
// bleuCurve, pastRuns, translations, …), which these wait on.
import assert from 'node:assert/strict';
import { PHONE } from './site.js';

/** The helpers for the section `id` whose cards are named `${prefix}-…`. */
export function seq2seqSection(id, prefix) {
  const S = `#${id}`;
  const plot = (name) => `[data-plot="${prefix}-${name}"]`;
  const dataset = (page) => page.$eval(S, (s) => ({ ...s.dataset }));
  const trainState = (page) => page.$eval(S, (s) => s.dataset.trainState);
  // A page opens with two training workers (sections 5 and 6), each loading the package and a
  // shipped model and scoring it held out: ~3 s on an idle machine, once over 20 s in Firefox on
  // a 2-core machine under a load average of 7, hence the margin.
  const waitState = (page, states, timeout = 40000) => page.waitForFunction(
    ([sid, list]) => list.includes(document.getElementById(sid).dataset.trainState), [id, states], { timeout },
  );
  const output = (page) => page.textContent(`${S} .translation-output`);
  // A card's drawing, and a wait for it to be drawn anew (the worker reported a changed model).
  const drawing = (page, selector) => page.$eval(selector, (p) => p.innerHTML);
  const waitRedrawn = (page, selector, before) => page.waitForFunction(
    ([sel, html]) => document.querySelector(sel).innerHTML !== html, [selector, before],
  );

  // Types a sentence and waits for its translation to be drawn.
  async function translate(page, text) {
    const count = await page.$eval(S, (s) => Number(s.dataset.translations ?? 0));
    await page.fill(`${S} input[name="sentence"]`, text);
    await page.waitForFunction(([sid, n]) => Number(document.getElementById(sid).dataset.translations ?? 0) > n, [id, count]);
    return (await output(page)).replace(/^→ /, '');
  }

  // Opens the page of `site` (useBuiltSite's) and checks the section's heading, and that its
  // shipped model translates d2l's examples at once, draws their alignment, flags a word outside
  // the vocabulary and scores above 0.9 held out; the section's screenshot goes to
  // desktop-<id>-shipped.png. { page, errors } for the caller's further checks.
  async function openShipped(site, heading) {
    const { page, errors } = await site.open();
    assert.equal(await page.textContent(`#${id}-title`), heading);
    await waitState(page, ['idle']);
    await page.waitForSelector(`${S} .translation-output`);
    assert.match(await page.textContent(`${S} .train-stats`), /^shipped model: held-out BLEU/);
    // d2l's four test sentences and their reference translations (sec_seq2seq_training).
    for (const [en, fr] of [['go .', 'va !'], ['i lost .', "j'ai perdu ."], ["he's calm .", 'il est calme .'], ["i'm home .", 'je suis chez moi .']]) {
      assert.equal(await translate(page, en), fr, en);
    }
    // The heatmap: output tokens down, source tokens across.
    const cells = await page.$eval(`${plot('translate')} g[aria-label="cell"]`, (g) => g.children.length);
    assert.equal(cells, 6 * 4, 'je suis chez moi . <eos> (rows) × i\'m home . <eos> (columns)');
    // A word outside the vocabulary is kept and marked.
    await translate(page, 'She likes the purple cats.');
    const unknown = await page.$$eval(`${S} .translation .tokens span.unknown`, (s) => s.map((c) => c.firstChild.textContent));
    assert.deepEqual(unknown, ['purple']);
    assert.match(await page.textContent(`${S} .translation .plot-note`), /1 word outside the vocabulary/);
    // The probe (held out, not a training pair) and its reference translation, where French
    // puts the adjective after the noun: black cats -> chats noirs.
    assert.match(await page.textContent(`${S} .probe-line`), /she likes the black cats \. <eos> {2}→ {2}elle aime les chats noirs \. <eos>/);
    assert.ok(Number((await dataset(page)).bleu) > 0.9, 'the shipped model scores above 0.9 held out');
    await page.evaluate(() => document.fonts.ready);
    await page.locator(S).screenshot({ path: site.shot(`desktop-${id}-shipped.png`) });
    return { page, errors };
  }

  // Task and seed come from the URL under the section's prefix: the controls show them, the
  // share link carries them, and going back to the default task drops it from the URL. `open`
  // opens the page at a query; check(page) runs meanwhile, on the dates task's shipped model.
  async function assertTaskAndSeedInUrl(open, check) {
    const { page, errors } = await open(`?${prefix}.task=dates&${prefix}.seed=7`);
    await waitState(page, ['idle']);
    assert.equal(await page.inputValue(`${S} select[name="task"]`), 'dates');
    assert.equal(await page.inputValue(`${S} input[name="seed"]`), '7');
    await check(page);
    assert.equal(new URL(await page.getAttribute(`${S} .share-link`, 'href'), 'http://x').search + `#${id}`,
      `?${prefix}.task=dates&${prefix}.seed=7#${id}`);
    await page.selectOption(`${S} select[name="task"]`, 'fra-eng');
    await page.waitForFunction((p) => !location.search.includes(`${p}.task`), prefix);
    await waitState(page, ['idle']);
    assert.deepEqual(errors, []);
    await page.close();
  }

  // Nothing on the page is wider than the viewport, and no plot of the section scrolls sideways
  // inside its card (a .plot scrolls rather than widen the page), once the fonts are in.
  async function assertNothingWider(page) {
    await page.evaluate(() => document.fonts.ready);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `page is ${overflow}px wider than the viewport`);
    const scrolling = await page.$$eval(`${S} .plot`, (plots) => plots
      .filter((p) => p.scrollWidth > p.clientWidth).map((p) => p.closest('[data-plot]')?.dataset.plot));
    assert.deepEqual(scrolling, [], 'plots wider than their card');
  }

  // On a phone nothing is wider than the screen (assertNothingWider): `open` opens the page at
  // `query`; screenshots of the section and of `cards` (names after the prefix) go to shot(name).
  async function assertPhoneLayout(open, query, { shot, name, cards = [] }) {
    const { page, errors } = await open(query, PHONE);
    await waitState(page, ['idle']);
    await page.waitForSelector(`${plot('translate')} svg`);
    for (const card of cards) await page.waitForSelector(`${plot(card)} .plot > *`);
    await assertNothingWider(page);
    await page.locator(S).screenshot({ path: shot(`phone-${name}.png`) });
    for (const card of cards) await page.locator(plot(card)).screenshot({ path: shot(`phone-${name}-${card}.png`) });
    assert.deepEqual(errors, []);
    await page.close();
  }

  return {
    S, plot, dataset, trainState, waitState, output, drawing, waitRedrawn, translate,
    openShipped, assertTaskAndSeedInUrl, assertNothingWider, assertPhoneLayout,
  };
}
