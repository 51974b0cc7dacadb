// The built page (build/site/) served on a free loopback port and opened in a headless browser,
// shared by the page's browser tests, which run once per engine (browser.js). They build
// nothing: scripts/build.sh must have run.
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

// Where a file the tests write for review goes: Chromium's under its plain name, as before there
// were two engines, and another engine's beside it under the engine's name
// (firefox-desktop-qkv.png, webkit-desktop-qkv.png).
export const shotPath = (engine, name) => `${SHOTS}${engine === 'chromium' ? '' : `${engine}-`}${name}`;

// Registers the suite's before/after hooks (call it inside the engine's describe); returns
// { engine, base, browser, open(query, viewport), shot(name) }, where open() waits until the page
// says it is ready and collects its console errors, and shot(name) is shotPath's. The page is
// served cross-origin isolated, as `npm start` serves it (threads), unless isolated is false.
export function useBuiltSite(engine, { hash = '', isolated = true } = {}) {
  let server;
  const site = {
    engine,
    base: '',
    browser: undefined,
    shot: (name) => shotPath(engine, name),
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
    site.browser = await launchBrowser(engine);
    await mkdir(SHOTS, { recursive: true });
  });
  after(async () => {
    await site.browser?.close();
    server?.close();
  });
  return site;
}
