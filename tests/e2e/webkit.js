// WebKit, Safari's engine, as Debian ships it: WebKitGTK's MiniBrowser driven by WebKitWebDriver
// (package webkit2gtk-driver), drawing on a virtual X display (Xvfb, package xvfb) that the
// browser's pages share. The pages are WebKitPage's (webkit-page.js), which answer what the tests
// ask of puppeteer's pages in the other engines.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeProcessTree } from './process-tree.js';
import { Session, startDriver } from './webdriver.js';
import { WebKitPage } from './webkit-page.js';

const MULTIARCH = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch];
const MINIBROWSER = process.env.MINIBROWSER_PATH ?? `/usr/lib/${MULTIARCH}/webkit2gtk-4.1/MiniBrowser`;

// WebKitGTK ships SharedArrayBuffer disabled: Safari enables it in the web process of a
// cross-origin-isolated page, but the GLib ports' process launcher does not pass that on (WebKit
// bug 317847, "[GLIB] Enable SharedArrayBuffer in GLib-backed WebKit (WPE, GTK)", open as
// WebKit/WebKit#74274; commit 312336@main says the feature "was never supported on Linux"), so
// the page would run on one thread there ("no SharedArrayBuffer or wasm atomics"). JavaScriptCore
// reads its options from JSC_* variables at start-up, and this one turns it on in every web
// process the driver's MiniBrowser starts: the page then runs on threads when cross-origin
// isolated, as in Safari. (It turns SharedArrayBuffer on in pages that are not isolated too,
// unlike Safari; the package looks at crossOriginIsolated first, so those stay on one thread.)
const ENV = { JSC_useSharedArrayBuffer: '1' };

// WebKit's automation times a script out in the page's web process, so a page whose main thread is
// held answers late or never: in three clean-clone runs of 2026-11-28 one request came back
// "timeout", after 300 s (fetch's own limit) twice and after 60 s once (the page-load timeout:
// the first script on a page waits for its navigation to end, and WebKit now and then waits for
// one that has, which webkit-page.js's goto() answers). A request still open STALL_MS after it
// was sent is abandoned, and a timeout's error is extended, with what the browser's processes
// and threads were doing then (process-tree.js), so that the test fails in time and says
// whether the page was busy or waiting.
const SCRIPT_TIMEOUT_MS = 60000;
const STALL_MS = SCRIPT_TIMEOUT_MS + 30000;

const CAPABILITIES = {
  // Navigation may return once the document is parsed, not loaded, so that the error hook goes in
  // sooner (webkit-page.js); WebKit 2.50 was seen to wait for the load all the same.
  pageLoadStrategy: 'eager',
  // An in-page wait reports back within 10 s (webkit-page.js); this leaves it room on a busy machine.
  timeouts: { script: SCRIPT_TIMEOUT_MS, pageLoad: SCRIPT_TIMEOUT_MS },
  'webkitgtk:browserOptions': {
    binary: MINIBROWSER,
    // --full-screen hides MiniBrowser's toolbar, so the window is the viewport and can be as
    // narrow as a phone (the toolbar will not shrink below 447 px); with no window manager on
    // the display, the window keeps the size WebDriver gives it.
    args: ['--automation', '--full-screen'],
  },
};

// Every display and driver still running, ended if the test process exits without closing them
// (a MiniBrowser whose display ends, ends too).
const running = new Set();
process.on('exit', () => {
  for (const stop of running) stop();
});

// A virtual X display of its own: Xvfb picks a free display number and writes it to fd 3, so
// test files that run at once cannot race for one (as xvfb-run -a can).
async function startDisplay() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1920x1080x24', '-nolisten', 'tcp'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let stderr = '';
  xvfb.stderr.on('data', (chunk) => { stderr = `${stderr}${chunk}`.slice(-2000); });
  const number = await new Promise((resolve, reject) => {
    let out = '';
    xvfb.stdio[3].on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.trim());
    });
    xvfb.once('error', reject);
    xvfb.once('exit', (code) => reject(new Error(`Xvfb exited (${code}): ${stderr.trim()}`)));
  });
  const stop = () => xvfb.kill();
  running.add(stop);
  return {
    display: `:${number}`,
    stop() {
      running.delete(stop);
      stop();
    },
  };
}

// A session normally starts in about a second; under load WebKitWebDriver was seen to never
// answer (its MiniBrowser never connected, once in ~40 starts with both cores busy), and a new
// driver and browser then start as usual.
const SESSION_TIMEOUT_MS = 30000;
const SESSION_ATTEMPTS = 3;

// A WebKit browser: a page gets a driver and a MiniBrowser of its own (a driver holds one session
// at a time), ~0.9 s to start, which closing the page ends. (Handing a closed page's MiniBrowser,
// back on about:blank, to the next page saved ~0.5 s a page, and would have shared cache and
// storage between pages, where the other engines give each page a fresh context.)
export async function launchWebKit() {
  const screen = await startDisplay();
  const env = { ...process.env, ...ENV, DISPLAY: screen.display };
  const pages = new Set();
  // One attempt at a page: a driver of its own, its session, the page.
  async function openPage(viewport) {
    const driver = await startDriver('WebKitWebDriver', { env });
    running.add(driver.stop);
    let session;
    let closed;
    // Deleting the session quits MiniBrowser; one that hangs ends with the display.
    const close = () => (closed ??= (async () => {
      pages.delete(close);
      await Promise.race([session?.delete().catch(() => {}), sleep(10000, null, { ref: false })]);
      running.delete(driver.stop);
      await driver.stop();
    })());
    pages.add(close);
    try {
      session = await Session.create(driver.url, CAPABILITIES, {
        timeout: SESSION_TIMEOUT_MS,
        stall: { after: STALL_MS, describe: () => describeProcessTree(driver.pid) },
      });
      return await WebKitPage.open(session, close, viewport);
    } catch (error) {
      await close();
      throw error;
    }
  }
  return {
    async newPage(viewport) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await openPage(viewport);
        } catch (error) {
          if (error.name !== 'TimeoutError' || attempt >= SESSION_ATTEMPTS) throw error;
          console.log(`WebKit: no session after ${SESSION_TIMEOUT_MS / 1000} s (attempt ${attempt}), starting another`);
        }
      }
    },
    async close() {
      await Promise.all([...pages].map((close) => close()));
      screen.stop();
    },
  };
}
