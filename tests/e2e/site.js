// The built page (build/site/) served on a free loopback port and opened in headless Chromium,
// shared by the page's browser tests. They build nothing: scripts/build.sh must have run.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/serve.js';
import { launchBrowser, watchErrors } from './browser.js';

export const SITE = fileURLToPath(new URL('../../build/site/', import.meta.url));
export const SHOTS = fileURLToPath(new URL('../../build/screenshots/', import.meta.url));
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

// Registers the suite's before/after hooks; returns { base, browser, open(query, viewport) },
// where open() waits until the page says it is ready and collects its console errors. The page is
// served cross-origin isolated, as `npm start` serves it (threads), unless isolated is false.
export function useBuiltSite({ hash = '', isolated = true } = {}) {
  let server;
  const site = {
    base: '',
    browser: undefined,
    async open(query = '', viewport = DESKTOP) {
      const page = await site.browser.newPage({ viewport });
      const errors = watchErrors(page);
      await page.goto(`${site.base}${query}${hash}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 15000 });
      return { page, errors };
    },
  };
  before(async () => {
    if (!existsSync(`${SITE}index.html`)) {
      throw new Error(`no built page in ${SITE}: run scripts/build.sh (npm run build) first`);
    }
    server = await serve(SITE, 0, '127.0.0.1', { isolated });
    site.base = `http://127.0.0.1:${server.address().port}/`;
    site.browser = await launchBrowser();
    await mkdir(SHOTS, { recursive: true });
  });
  after(async () => {
    await site.browser?.close();
    server?.close();
  });
  return site;
}

// An element's screenshot. Playwright first waits for the element to hold still over two
// animation frames; once, in a full run, that wait outlasted its 30 s on a page whose run had
// finished (the benchmark's desktop screenshot; not reproduced in eight later runs). One retry,
// so that a stalled frame does not fail a test whose assertions have all passed.
export async function screenshotOf(locator, path) {
  try {
    await locator.screenshot({ path, timeout: 20000 });
  } catch (error) {
    if (error?.name !== 'TimeoutError') throw error;
    await locator.screenshot({ path, timeout: 20000 });
  }
}
