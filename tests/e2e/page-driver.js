// The calls the browser tests make on a page, over puppeteer-core's Page and the same in every
// engine. The tests were first written against Playwright's Page, and these keep its names and
// its waiting rules, so that a test reads and waits as it did: a query (textContent,
// getAttribute, …) waits for its element to be in the document, an action (click, check) for it
// to be visible, enabled and still, and waitForFunction takes one argument before its options.
// What puppeteer's Page has under the same name and meaning ($, $eval, $$eval, evaluate, goto,
// mouse, keyboard, screenshot, url, on) is passed through, and setViewport under Playwright's
// name, setViewportSize.
export class TestPage {
  #page;
  #close;

  constructor(page, close) {
    this.#page = page;
    this.#close = close;
  }

  get mouse() { return this.#page.mouse; }
  get keyboard() { return this.#page.keyboard; }
  on(event, handler) { this.#page.on(event, handler); }
  goto(url) { return this.#page.goto(url); }
  url() { return this.#page.url(); }
  $(selector) { return this.#page.$(selector); }
  $eval(selector, fn, arg) { return this.#page.$eval(selector, fn, arg); }
  $$eval(selector, fn, arg) { return this.#page.$$eval(selector, fn, arg); }
  evaluate(fn, arg) { return this.#page.evaluate(fn, arg); }
  screenshot(options) { return this.#page.screenshot(options); }
  setViewportSize(size) { return this.#page.setViewport(size); }
  waitForSelector(selector, options) { return this.#page.waitForSelector(selector, options); }
  waitForTimeout(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }
  close() { return this.#close(); }

  waitForFunction(fn, arg, options = {}) {
    return this.#page.waitForFunction(fn, options, arg);
  }

  // One element's property, once the element is in the document.
  async #read(selector, fn, arg) {
    await this.#page.waitForSelector(selector);
    return this.#page.$eval(selector, fn, arg);
  }

  textContent(selector) { return this.#read(selector, (e) => e.textContent); }
  getAttribute(selector, name) { return this.#read(selector, (e, n) => e.getAttribute(n), name); }
  inputValue(selector) { return this.#read(selector, (e) => e.value); }
  isDisabled(selector) { return this.#read(selector, (e) => e.matches(':disabled')); }
  async isEnabled(selector) { return !(await this.isDisabled(selector)); }

  // Playwright's visibility: a box of some size and not visibility: hidden; no element is hidden.
  isHidden(selector) {
    return this.#page.$$eval(selector, ([element]) => {
      if (!element) return true;
      const box = element.getBoundingClientRect();
      return box.width === 0 || box.height === 0 || getComputedStyle(element).visibility === 'hidden';
    });
  }

  // Puppeteer's locator waits for the element to be visible, enabled and not moving, and scrolls
  // it into view, before it clicks.
  click(selector) { return this.#page.locator(selector).click(); }

  async check(selector) {
    if (!(await this.#read(selector, (e) => e.checked))) await this.click(selector);
    if (!(await this.#read(selector, (e) => e.checked))) throw new Error(`check: ${selector} did not become checked`);
  }

  async focus(selector) {
    await this.#page.waitForSelector(selector);
    await this.#page.focus(selector);
  }

  // Sets a select's value and sends input and change, as a person's pick does.
  async selectOption(selector, value) {
    await this.#page.waitForSelector(selector);
    await this.#page.select(selector, value);
  }

  // Replaces a text field's value with one edit (one input event, as Playwright's fill and a
  // paste do; typing it key by key would send one per character, and the page would compute on
  // every prefix).
  async fill(selector, value) {
    await this.#read(selector, (input, text) => {
      input.focus();
      input.select();
      document.execCommand(text ? 'insertText' : 'delete', false, text);
    }, value);
  }

  locator(selector) { return new Locator(this.#page, selector); }
}

// One element by selector, found when used (as Playwright's locators are).
class Locator {
  #page;
  #selector;

  constructor(page, selector) {
    this.#page = page;
    this.#selector = selector;
  }

  async #with(fn) {
    const handle = await this.#page.waitForSelector(this.#selector);
    try {
      return await fn(handle);
    } finally {
      await handle.dispose();
    }
  }

  scrollIntoViewIfNeeded() { return this.#with((h) => h.scrollIntoView()); }
  boundingBox() { return this.#with((h) => h.boundingBox()); }
  screenshot({ path }) { return this.#with((h) => h.screenshot({ path })); }
}
