// The browsers the e2e tests run in, all three Debian's: Chromium and Firefox ESR driven by
// puppeteer-core (which downloads no browser of its own), Chromium over the DevTools Protocol and
// Firefox over WebDriver BiDi, one driver for both, so that a test that fails in one engine and
// not in the other fails for the engine's sake, not a driver's; and WebKit (WebKitGTK's
// MiniBrowser, Safari's engine), which speaks only classic WebDriver, through webkit.js, whose
// pages answer the same calls (webkit-page.js). Every test file runs its tests once per engine in
// ENGINES; E2E_ENGINES=firefox,webkit (a comma-separated list) runs fewer.
import puppeteer from 'puppeteer-core';
import { TestPage } from './page-driver.js';
import { launchWebKit } from './webkit.js';

const LAUNCH = {
  chromium: {
    browser: 'chrome',
    protocol: 'cdp',
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    // These keep Chromium from reaching for the network, which this machine closes, at start-up.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  },
  firefox: {
    browser: 'firefox',
    protocol: 'webDriverBiDi',
    executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
  },
};

const KNOWN = [...Object.keys(LAUNCH), 'webkit'];
export const ENGINES = (process.env.E2E_ENGINES ?? KNOWN.join(',')).split(',').map((name) => {
  if (!KNOWN.includes(name)) throw new Error(`E2E_ENGINES: no engine ${name} (known: ${KNOWN})`);
  return name;
});

// Whether the engine's WebAssembly validates relaxed SIMD, and so whether the page loads the
// SIMD build with its relaxed loops: Chromium 156 and Firefox ESR 153 do by default; WebKitGTK
// 2.50's JavaScriptCore has it behind an option that is off (useWasmRelaxedSIMD), so there the
// page runs the SIMD128 loops.
export const relaxedSimd = (engine) => engine !== 'webkit';

// Playwright's default viewport, which the tests were written against.
const DEFAULT_VIEWPORT = { width: 1280, height: 720 };

// A headless browser of `engine` whose newPage({ viewport }) opens a TestPage in a fresh browser
// context (its own storage and cache, as Playwright's newPage gave each page); closing the page
// closes its context (WebKit's pages have a browser of their own each: webkit.js). `launch` adds
// to puppeteer's launch options (scripts/bench/engines/engines.js sets Firefox preferences with
// extraPrefsFirefox).
export async function launchBrowser(engine, launch = {}) {
  if (engine === 'webkit') {
    const webkit = await launchWebKit();
    return {
      engine,
      newPage: ({ viewport = DEFAULT_VIEWPORT } = {}) => webkit.newPage(viewport),
      close: () => webkit.close(),
    };
  }
  const browser = await puppeteer.launch({ ...LAUNCH[engine], ...launch, headless: true });
  return {
    engine,
    async newPage({ viewport = DEFAULT_VIEWPORT } = {}) {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      await page.setViewport(viewport);
      return new TestPage(page, () => context.close());
    },
    close: () => browser.close(),
  };
}

// Collects console errors and uncaught page errors, so a test can assert there were none (in
// WebKit, those its page's error hook sees: webkit-page.js).
export function watchErrors(page) {
  const errors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  return errors;
}
