// A W3C WebDriver client (the classic HTTP protocol, https://www.w3.org/TR/webdriver2/) with
// only the commands the browser tests use, over Node's fetch. It drives WebKitGTK's
// WebKitWebDriver (webkit.js), which speaks this protocol and not WebDriver BiDi, so puppeteer,
// which drives Chromium and Firefox (browser.js), cannot drive it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

// The key under which the protocol passes an element reference (the spec's "Elements").
export const ELEMENT = 'element-6066-11e4-a52e-4f735466cecf';

export class WebDriverError extends Error {
  constructor(command, { error = 'unknown error', message = '' } = {}) {
    super(`${command}: ${error}${message ? `: ${message}` : ''}`);
    this.error = error;
  }
}

// A free loopback port, for a driver that must be told its port (a small race: another process
// may take it before the driver binds it; startDriver then tries another).
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Starts a WebDriver server (`command --port=N`, as WebKitWebDriver, chromedriver and geckodriver
// take it) and waits until it says it is ready; returns { url, pid, stop() }. stop() ends the driver;
// the browser it launched ends when its session is deleted, not with the driver.
export async function startDriver(command, { env = process.env, attempts = 3 } = {}) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(command, [`--port=${port}`], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr = `${stderr}${chunk}`.slice(-2000); }); // the last lines say why
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const stop = () => {
      child.kill();
      return exited;
    };
    const url = `http://127.0.0.1:${port}`;
    for (const started = Date.now(); Date.now() - started < 10000;) {
      const ready = await fetch(`${url}/status`).then((r) => r.json()).then((r) => r.value?.ready, () => false);
      if (ready) return { url, pid: child.pid, stop };
      if (child.exitCode !== null || child.signalCode !== null) break;
      await sleep(50);
    }
    await stop();
    if (attempt >= attempts) throw new Error(`${command} did not start on port ${port}: ${stderr.trim()}`);
  }
}

// One WebDriver session: one browser window. Commands go one at a time, as the remote end
// processes them, so that concurrent calls from a test cannot interleave.
export class Session {
  #base;
  #queue = Promise.resolve();
  #stall;

  constructor(base, stall) {
    this.#base = base;
    this.#stall = stall;
  }

  // `timeout` (ms) bounds the wait for the browser to start and answer: a WebKitWebDriver whose
  // MiniBrowser never connects holds the request until fetch gives up, 300 s later. `stall`, if
  // given, { after, describe }, bounds every command: one without an answer `after` ms is
  // abandoned with an error that says what `describe()` (async, lines of text) found then; a
  // script timeout's error says what it found just after.
  static async create(url, capabilities, { timeout, stall } = {}) {
    const { sessionId } = await request(url, 'POST', '/session', { capabilities: { alwaysMatch: capabilities } },
      timeout && AbortSignal.timeout(timeout));
    return new Session(`${url}/session/${sessionId}`, stall);
  }

  command(method, path, body) {
    const run = this.#queue.then(() => (this.#stall ? this.#bounded(method, path, body) : request(this.#base, method, path, body)));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #bounded(method, path, body) {
    const { after, describe } = this.#stall;
    const abort = new AbortController();
    let found = null;
    const timer = setTimeout(async () => {
      found = await describe().catch((error) => [`(no description: ${error.message})`]);
      abort.abort();
    }, after);
    try {
      return await request(this.#base, method, path, body, abort.signal);
    } catch (error) {
      if (abort.signal.aborted) {
        throw new WebDriverError(`${method} ${path || '/'}`, {
          error: 'no answer',
          message: `none in ${after / 1000} s; the browser's processes then:\n${found.join('\n')}`,
        });
      }
      // A script that outlived the session's script timeout ("script timeout"), or WebKit's
      // "timeout" (a script timeout, or its wait for a navigation to end outliving the page-load
      // timeout: webkit-page.js): the error says what the script was, what the processes were
      // doing just after, and how the page answers then.
      if (error.error === 'timeout' || error.error === 'script timeout') {
        clearTimeout(timer);
        const now = await describe().catch((e) => [`(no description: ${e.message})`]);
        const page = await this.#probe().catch((e) => [`(no probe: ${e.message})`]);
        error.message += `; the script began ${JSON.stringify(String(body?.script).slice(0, 160))}`
          + `; the browser's processes then:\n${now.join('\n')}\nthe page then:\n${page.join('\n')}`;
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  // What a page that let a script time out answers now, each probe bounded by a 5 s script
  // timeout: its state at once (no timer needed), then whether a timer and an animation frame
  // still come. Tells a page that WebKit holds hidden or suspended from one that is stuck.
  #probe() {
    const probes = {
      state: 'return [document.visibilityState, document.readyState, document.hasFocus(), Math.round(performance.now())].join(" ");',
      timer: 'const t = performance.now(); return new Promise((r) => setTimeout(() => r(`a timer came after ${Math.round(performance.now() - t)} ms`), 0));',
      frame: 'const t = performance.now(); return new Promise((r) => requestAnimationFrame(() => r(`a frame came after ${Math.round(performance.now() - t)} ms`)));',
    };
    // Inside the command that timed out: straight to the driver, not through the queue.
    const send = (method, path, body) => request(this.#base, method, path, body, AbortSignal.timeout(15000));
    return withTimeouts(send, { script: 5000 }, async () => {
      const lines = [];
      for (const [name, probe] of Object.entries(probes)) {
        const answer = await send('POST', '/execute/sync', { script: probe, args: [] }).catch((e) => `no answer (${e.message})`);
        lines.push(`${name}: ${answer}`);
      }
      return lines;
    });
  }

  // fn() with the session's timeouts (script, pageLoad, implicit, in ms) set as given, then put
  // back as they were.
  withTimeouts(timeouts, fn) { return withTimeouts((...c) => this.command(...c), timeouts, fn); }

  navigate(url) { return this.command('POST', '/url', { url }); }
  // Runs `script` (a function body; `arguments` holds `args`) in the page; a returned promise is
  // awaited.
  execute(script, args = []) { return this.command('POST', '/execute/sync', { script, args }); }
  click(element) { return this.command('POST', `/element/${element[ELEMENT]}/click`, {}); }
  performActions(actions) { return this.command('POST', '/actions', { actions }); }
  setWindowRect(rect) { return this.command('POST', '/window/rect', rect); }
  async screenshot() { return Buffer.from(await this.command('GET', '/screenshot'), 'base64'); }
  delete() { return this.command('DELETE', ''); }
}

async function withTimeouts(send, timeouts, fn) {
  const before = await send('GET', '/timeouts');
  await send('POST', '/timeouts', timeouts);
  try {
    return await fn();
  } finally {
    await send('POST', '/timeouts', Object.fromEntries(Object.keys(timeouts).map((key) => [key, before[key]])));
  }
}

async function request(base, method, path, body, signal) {
  const response = await fetch(`${base}${path}`, {
    method,
    signal,
    headers: body ? { 'content-type': 'application/json; charset=utf-8' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const { value } = await response.json();
  if (!response.ok) throw new WebDriverError(`${method} ${path || '/'}`, value);
  return value;
}
