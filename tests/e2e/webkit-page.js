// TestPage's calls (page-driver.js) over one WebDriver session (webdriver.js), for WebKit
// (webkit.js): the same names, arguments and waiting rules, so that every test file runs in
// WebKit unchanged. A query (textContent, getAttribute, …) waits for its element to be in the
// document; click waits for it to be visible, enabled and still; waitForFunction and
// waitForSelector poll in the page, once per animation frame as puppeteer does, 30 s unless told.
// Values come back as JSON, as puppeteer's evaluate returns them (NaN, ±Infinity and -0 too).
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodePng, encodePng } from './png.js';
import { Keyboard, Mouse } from './webkit-input.js';

const TIMEOUT = 30000; // puppeteer's default
// An in-page wait reports back at least this often, so that one WebDriver request stays well
// inside the session's script timeout (webkit.js) and the test's own timeout is kept here.
const SLICE = 10000;
// Element-click errors that a later try may not meet (the element was covered or moving).
const RETRY_CLICK = new Set(['element click intercepted', 'element not interactable']);

// WebDriver classic sends no console or error events (BiDi would), so errors are collected in the
// page: goto() installs this hook, which wraps console.error and listens for uncaught errors and
// unhandled rejections on window, and every later call takes what it gathered (watchErrors gets
// them as puppeteer's 'console' and 'pageerror' events). What it cannot see: anything before
// goto() installs it (as soon as navigation returns, which webkit.js asks for once the document
// is parsed; WebKit 2.50 was seen to return at load all the same: an error in a module's first
// run shows as a page that never gets ready), errors inside workers (not window's; puppeteer's
// pageerror does not report them either), and errors after the test's last call on the page.
// WebKitGTK can print console messages on stdout (MiniBrowser
// --enable-write-console-messages-to-stdout), but not for an ephemeral session, and MiniBrowser's
// automation mode always is one (tried: nothing printed). Returns the viewport's size, for
// goto() to check.
function installErrorHook() {
  if (!window.__e2eErrors) {
    const errors = (window.__e2eErrors = []);
    const original = console.error;
    console.error = function error(...args) {
      errors.push(['console', args.map(String).join(' ')]);
      return original.apply(this, args);
    };
    const uncaught = (error) => errors.push(['pageerror', error instanceof Error ? [error.name, error.message] : ['Error', String(error)]]);
    addEventListener('error', (event) => uncaught(event.error ?? event.message));
    addEventListener('unhandledrejection', (event) => uncaught(event.reason));
  }
  return [innerWidth, innerHeight];
}

// The first script on a page just navigated to (the error hook) was seen to go unanswered: in
// clean-clone runs it came back "timeout" after 60 s, ~60 s into a test that had just opened its
// page, while the page, probed just after (webdriver.js), was visible and loaded and ran timers
// and frames. 60 s is the session's page-load timeout (webkit.js): before running a script,
// WebKit's automation waits for the page's navigation to end, and now and then it waits for one
// that already has (2 of 120 navigations by hand beside a busy loop, 2026-11-29; with the
// page-load timeout at 8 s the script came back "timeout" after 8 s, and the same script sent
// again ran at once). So the hook goes in under a short page-load timeout, and once more if that
// passes (it does nothing the second time that the first did); a line says when.
const FIRST_SCRIPT_MS = 5000;
const FIRST_SCRIPT_ATTEMPTS = 3;
// WebKit 2.50 names a page-load or script timeout "timeout"; the standard's names differ.
const TIMED_OUT = new Set(['timeout', 'script timeout']);

// JSON has no NaN, Infinity or -0 (a table cell with no ratio reads NaN): they travel as
// { [NUMBER]: 'NaN' } and so on.
const NUMBER = '__e2eNumber';
const revive = (key, value) => (value?.[NUMBER] === undefined ? value : Number(value[NUMBER]));

// The script that runs function source `fn` on the call's arguments and hands back its value
// (as JSON unless raw: an element is then passed as a reference), the errors the hook gathered
// since the last call, and the page's address (for url(), which puppeteer answers at once).
const script = (fn, raw) => `return Promise.resolve((${fn}).apply(null, arguments)).then((value) => ({
  value: ${raw ? 'value' : `JSON.stringify(value, (key, v) => (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)) ? { ${NUMBER}: Object.is(v, -0) ? '-0' : String(v) } : v))`},
  errors: window.__e2eErrors ? window.__e2eErrors.splice(0) : [],
  href: location.href,
}));`;

// In-page: a promise of the next animation frame, or of 100 ms if no frame comes sooner (a
// window WebKit takes for hidden draws none, and once a wait for one outlived the script timeout).
const NEXT_FRAME = `() => new Promise((resolve) => {
  const timer = setTimeout(resolve, 100);
  requestAnimationFrame(() => { clearTimeout(timer); resolve(); });
})`;
// In-page: two frames, after which what a resize or a scroll changed has been drawn.
const TWO_FRAMES = `() => (${NEXT_FRAME})().then(${NEXT_FRAME})`;

// Function source that calls `predicate` on its arguments once per animation frame until it
// returns something truthy, { done: true, value }, or SLICE ms pass, { done: false }. An error in
// the predicate ends the wait, as in puppeteer.
const waiter = (predicate, slice) => `(...args) => new Promise((resolve, reject) => {
  const until = performance.now() + ${slice};
  const poll = () => Promise.resolve().then(() => (${predicate})(...args)).then((value) => {
    if (value) resolve({ done: true, value });
    else if (performance.now() >= until) resolve({ done: false });
    else (${NEXT_FRAME})().then(poll);
  }, reject);
  poll();
})`;

// The element of `selector` once it is visible (a box of some size, not visibility: hidden),
// enabled, its centre in the viewport (else it is scrolled there first, so that what the scroll
// sets off, a section drawn as it comes near, has moved it before it counts as still), and in the
// same place as at the previous poll (puppeteer's locator waits the same).
const ACTIONABLE = `(selector) => {
  const element = document.querySelector(selector);
  if (!element || element.matches(':disabled')) return null;
  const box = element.getBoundingClientRect();
  if (!box.width || !box.height || getComputedStyle(element).visibility === 'hidden') return null;
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) {
    element.scrollIntoView({ block: 'center', inline: 'center' });
    return null;
  }
  const boxes = (window.__e2eBoxes ??= new WeakMap());
  const key = [box.x, box.y, box.width, box.height].join();
  const still = boxes.get(element) === key;
  boxes.set(element, key);
  return still && element;
}`;

// In-page, before a click: a listener that notes the click's arrival on `element`. Whether it
// came (or the page navigated away, taking the note with it) is read after the click.
const ARM_CLICK = `(element) => {
  const note = (window.__e2eClick = { arrived: false });
  element.addEventListener('click', () => { note.arrived = true; }, { once: true, capture: true });
}`;
const CLICK_ARRIVED = '() => window.__e2eClick?.arrived ?? true';
// How long after WebDriver's click its arrival is waited for before the click is sent again.
const CLICK_ARRIVAL_MS = 1000;

export class WebKitPage {
  #session;
  #close;
  #handlers = { console: [], pageerror: [] };
  #href = 'about:blank';
  #viewport;

  constructor(session, close) {
    this.#session = session;
    this.#close = close;
    this.mouse = new Mouse(session);
    this.keyboard = new Keyboard(session);
  }

  // A page on `session` whose window is sized at once but checked only once a page is loaded
  // (goto): checking on about:blank would start a web process for it, ~0.7 s a page.
  static async open(session, close, viewport) {
    await session.setWindowRect(viewport);
    const page = new WebKitPage(session, close);
    page.#viewport = viewport;
    return page;
  }

  on(event, handler) {
    if (!this.#handlers[event]) throw new Error(`WebKitPage: no '${event}' events (only ${Object.keys(this.#handlers)})`);
    this.#handlers[event].push(handler);
  }

  // Runs function source `fn` in the page with `args`; passes on the errors the hook gathered.
  async #run(fn, args = [], { raw = false } = {}) {
    const { value, errors, href } = await this.#session.execute(script(fn, raw), args);
    this.#href = href;
    for (const [kind, what] of errors) {
      const event = kind === 'console' ? { type: () => 'error', text: () => what } : Object.assign(new Error(what[1]), { name: what[0] });
      for (const handler of this.#handlers[kind]) handler(event);
    }
    if (raw) return value;
    return value === null ? undefined : JSON.parse(value, revive); // JSON.stringify(undefined) is undefined
  }

  // Polls `predicate` (function source) in the page until it returns something truthy, which
  // comes back raw (an element as a reference); throws after `timeout` ms, naming `what`.
  async #waitFor(predicate, args, { timeout = TIMEOUT } = {}, what = predicate) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const slice = Math.max(0, Math.min(SLICE, deadline - Date.now()));
      const { done, value } = await this.#run(waiter(predicate, slice), args, { raw: true });
      if (done) return value;
      if (Date.now() >= deadline) throw new Error(`Waiting for ${what} failed: ${timeout} ms exceeded`);
    }
  }

  // One element's property, once the element is in the document.
  async #read(selector, fn, arg = null) {
    const found = `(selector, arg) => { const e = document.querySelector(selector); return e && { value: (${fn})(e, arg) }; }`;
    return (await this.#waitFor(found, [selector, arg], {}, `selector ${selector}`)).value;
  }

  async goto(url) {
    await this.#session.navigate(url);
    const [width, height] = await this.#session.withTimeouts({ pageLoad: FIRST_SCRIPT_MS }, () => this.#installHook(url));
    if (width !== this.#viewport.width || height !== this.#viewport.height) await this.setViewportSize(this.#viewport);
  }

  async #installHook(url) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#run(installErrorHook.toString());
      } catch (error) {
        if (!TIMED_OUT.has(error.error) || attempt >= FIRST_SCRIPT_ATTEMPTS) throw error;
        console.log(`WebKit: the first script on ${url} waited ${FIRST_SCRIPT_MS / 1000} s for a navigation that had ended (attempt ${attempt}); once more`);
      }
    }
  }

  url() { return this.#href; }
  evaluate(fn, arg) { return this.#run(fn.toString(), arg === undefined ? [] : [arg]); }
  $eval(selector, fn, arg = null) {
    return this.#run(`(selector, arg) => {
      const element = document.querySelector(selector);
      if (!element) throw new Error('no element matches ' + selector);
      return (${fn})(element, arg);
    }`, [selector, arg]);
  }
  $$eval(selector, fn, arg = null) {
    return this.#run(`(selector, arg) => (${fn})([...document.querySelectorAll(selector)], arg)`, [selector, arg]);
  }
  async $(selector) {
    const element = await this.#run('(selector) => document.querySelector(selector)', [selector], { raw: true });
    return element && new ElementHandle(this, element);
  }

  waitForFunction(fn, arg, options = {}) {
    return this.#waitFor(`(arg) => Boolean((${fn})(arg))`, [arg ?? null], options, `function ${fn}`);
  }
  async waitForSelector(selector, options = {}) {
    const element = await this.#waitFor('(s) => document.querySelector(s)', [selector], options, `selector ${selector}`);
    return new ElementHandle(this, element);
  }
  // Waits, then takes what the error hook gathered meanwhile.
  async waitForTimeout(ms) {
    await sleep(ms);
    await this.#run('() => null');
  }

  textContent(selector) { return this.#read(selector, (e) => e.textContent); }
  getAttribute(selector, name) { return this.#read(selector, (e, n) => e.getAttribute(n), name); }
  inputValue(selector) { return this.#read(selector, (e) => e.value); }
  isDisabled(selector) { return this.#read(selector, (e) => e.matches(':disabled')); }
  async isEnabled(selector) { return !(await this.isDisabled(selector)); }
  isHidden(selector) {
    return this.$$eval(selector, ([element]) => {
      if (!element) return true;
      const box = element.getBoundingClientRect();
      return box.width === 0 || box.height === 0 || getComputedStyle(element).visibility === 'hidden';
    });
  }

  // WebDriver's element click clicks the element's centre, as a person's pointer does; it
  // refuses while something covers the element, and then tries again. A click that WebDriver
  // answered but the element never got is sent again: beside a busy loop, section 5's comparison
  // button counted no click in 2 of ~26 runs of its test (tests/e2e/bahdanau.test.js) while the
  // click command had succeeded; why, WebKit did not say.
  async click(selector, { timeout = TIMEOUT } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
      const element = await this.#waitFor(ACTIONABLE, [selector], { timeout: Math.max(0, deadline - Date.now()) }, `${selector} to be clickable`);
      await this.#run(ARM_CLICK, [element]);
      try {
        await this.#session.click(element);
        const arrived = await this.#waitFor(CLICK_ARRIVED, [], { timeout: CLICK_ARRIVAL_MS }).then(() => true, () => false);
        if (arrived) return;
        console.log(`WebKit: a click on ${selector} did not arrive in ${CLICK_ARRIVAL_MS / 1000} s; sending it again`);
      } catch (error) {
        if (!RETRY_CLICK.has(error.error)) throw error;
      }
      if (Date.now() >= deadline) throw new Error(`click: ${selector} did not get a click in ${timeout} ms`);
      await sleep(100);
    }
  }

  async check(selector) {
    if (!(await this.#read(selector, (e) => e.checked))) await this.click(selector);
    if (!(await this.#read(selector, (e) => e.checked))) throw new Error(`check: ${selector} did not become checked`);
  }

  focus(selector) { return this.#read(selector, (e) => e.focus()); }

  // Sets a select's value and sends input and change, as puppeteer's select does.
  selectOption(selector, value) {
    return this.#read(selector, (select, v) => {
      select.value = v;
      select.dispatchEvent(new Event('input', { bubbles: true }));
      select.dispatchEvent(new Event('change', { bubbles: true }));
    }, value);
  }

  // Replaces a text field's value with one edit, as page-driver.js's fill does.
  fill(selector, value) {
    return this.#read(selector, (input, text) => {
      input.focus();
      input.select();
      document.execCommand(text ? 'insertText' : 'delete', false, text);
    }, value);
  }

  // The window is the viewport (webkit.js opens MiniBrowser without its toolbar); should the
  // browser draw anything around the page, the window grows by that much. Returns once the page
  // has laid itself out at the new size (two animation frames after the resize).
  // WebKit may answer the resize before the page has seen it (seen under load: a phone-width
  // request read the desktop's width back, and the window's compensated width came out negative),
  // so each side the resize changes is waited for until the page's differs from what it was.
  async setViewportSize({ width, height }) {
    this.#viewport = { width, height };
    const size = '() => [innerWidth, innerHeight]';
    const before = await this.#run(size);
    await this.#session.setWindowRect({ width, height });
    const resized = `(w, h, w0, h0) => (innerWidth !== w0 || w === w0) && (innerHeight !== h0 || h === h0) && (${size})()`;
    const [innerWidth, innerHeight] = await this.#waitFor(resized, [width, height, ...before], {}, `the page to be resized to ${width}×${height}`);
    if (innerWidth !== width || innerHeight !== height) {
      await this.#session.setWindowRect({ width: 2 * width - innerWidth, height: 2 * height - innerHeight });
      await this.#waitFor('(w, h) => innerWidth === w && innerHeight === h', [width, height], {}, `a viewport of ${width}×${height}`);
    }
    await this.#run(TWO_FRAMES);
  }

  // WebDriver's screenshot is of the viewport, and WebKit's of an element clips it to the
  // viewport, so a whole page or element is taken as viewport screenshots scrolled down it and
  // stitched (png.js), and the scroll is put back. `area` (function source) returns the part of
  // the document to take, in CSS pixels ({ left, top, width, height }). (Making the window as tall
  // as the page instead took 2.5 times as long: WebKit then paints the whole page twice, for the
  // window and for the screenshot.)
  async #capture(area, args) {
    const { rect, scroll } = await this.#run(`(...args) => ({ rect: (${area})(...args), scroll: [scrollX, scrollY] })`, args);
    const [x0, y0] = [Math.floor(rect.left), Math.floor(rect.top)];
    const [x1, y1] = [Math.ceil(rect.left + rect.width), Math.ceil(rect.top + rect.height)];
    const out = { width: x1 - x0, height: y1 - y0 };
    out.pixels = Buffer.alloc(out.width * out.height * 3, 255);
    try {
      for (let y = y0, jumps = 0; y < y1;) {
        // The screenshot shows the scroll position once a frame has been drawn at it.
        const [left, top] = await this.#run(`(to) => {
          scrollTo({ top: to, behavior: 'instant' });
          return (${TWO_FRAMES})().then(() => [Math.round(scrollX), Math.round(scrollY)]);
        }`, [y]);
        // Below the row asked for: the page scrolled itself meanwhile (a late jump to the URL's
        // #section did, 4000 px down), so row y is not in view: scroll back to it.
        if (top > y) {
          if (++jumps > 3) throw new Error(`the page kept scrolling itself below y = ${y} (to ${top}) while its screenshot was taken`);
          continue;
        }
        const tile = decodePng(await this.#session.screenshot()); // CSS pixels: device pixel ratio 1
        const rows = Math.min(y1 - y, tile.height - (y - top));
        if (rows <= 0) break; // the page got shorter meanwhile
        const [from, to] = [Math.max(x0 - left, 0), Math.min(x1 - left, tile.width)];
        for (let row = 0; row < rows; row++) {
          const source = (y - top + row) * tile.width;
          tile.pixels.copy(out.pixels, ((y - y0 + row) * out.width + from - (x0 - left)) * 3, (source + from) * 3, (source + to) * 3);
        }
        y += rows;
      }
    } finally {
      await this.#run((x, y) => scrollTo({ left: x, top: y, behavior: 'instant' }), scroll);
    }
    return encodePng(out);
  }

  // The viewport, or with fullPage the page as wide as its layout viewport (no scrollbar).
  async screenshot({ path, fullPage = false } = {}) {
    const png = fullPage
      ? await this.#capture(() => ({ left: 0, top: 0, width: document.documentElement.clientWidth, height: document.documentElement.scrollHeight }))
      : await this.#session.screenshot();
    if (path) await writeFile(path, png);
    return png;
  }

  locator(selector) {
    return {
      scrollIntoViewIfNeeded: () => this.#read(selector, (e) => {
        const box = e.getBoundingClientRect();
        if (box.top < 0 || box.left < 0 || box.bottom > innerHeight || box.right > innerWidth) {
          e.scrollIntoView({ block: 'center', inline: 'center' });
        }
      }),
      boundingBox: () => this.#read(selector, (e) => {
        const { x, y, width, height } = e.getBoundingClientRect();
        return { x, y, width, height };
      }),
      screenshot: async ({ path }) => {
        await this.waitForSelector(selector);
        const png = await this.#capture((s) => {
          const box = document.querySelector(s).getBoundingClientRect();
          return { left: box.left + scrollX, top: box.top + scrollY, width: box.width, height: box.height };
        }, [selector]);
        await writeFile(path, png);
        return png;
      },
    };
  }

  // The centre of `element` (a WebDriver reference), scrolled into view if it is not.
  centreOf(element) {
    return this.#run((e) => {
      const box = e.getBoundingClientRect();
      if (box.top < 0 || box.left < 0 || box.bottom > innerHeight || box.right > innerWidth) {
        e.scrollIntoView({ block: 'center', inline: 'center' });
      }
      const { x, y, width, height } = e.getBoundingClientRect();
      return { x: x + width / 2, y: y + height / 2 };
    }, [element]);
  }

  close() { return this.#close(); }
}

// What page.$ and waitForSelector return: tests only hover over one (and test it for null).
class ElementHandle {
  #page;
  #element;

  constructor(page, element) {
    this.#page = page;
    this.#element = element;
  }

  async hover() {
    const { x, y } = await this.#page.centreOf(this.#element);
    await this.#page.mouse.move(x, y);
  }
}
