// The page's guard against a worker whose thread blocks while it loads (web/src/workers/): until
// a worker's first answer, one that posts no heartbeat for silenceMs is terminated and a fresh
// one gets the same messages in order; a slow worker that keeps beating is left alone; after its
// restarts the section is told; a worker whose start is deferred gets what was posted meanwhile.
// Driven with fake workers on mocked timers.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, mock, test } from 'node:test';

import { importRepo } from './repo-module.js';

const { watchedWorker } = await importRepo('web/src/workers/watched-worker.js');
const { HEARTBEAT, heartbeatWhile } = await importRepo('web/src/workers/heartbeat.js');

class FakeWorker {
  listeners = { message: [], error: [] };
  received = [];
  terminated = false;
  addEventListener(type, listener) {
    this.listeners[type].push(listener);
  }
  postMessage(message) {
    this.received.push(message);
  }
  terminate() {
    this.terminated = true;
  }
  answer(data) {
    for (const listener of this.listeners.message) listener({ data });
  }
  fail(message) {
    for (const listener of this.listeners.error) listener({ message, preventDefault() {} });
  }
}

// A watched worker over fake workers: { watched, workers (every one created), messages,
// errors, restarts }.
function watch(options = {}) {
  const made = { workers: [], messages: [], errors: [], restarts: 0 };
  made.watched = watchedWorker(() => {
    const worker = new FakeWorker();
    made.workers.push(worker);
    return worker;
  }, {
    onMessage: (data) => made.messages.push(data),
    onError: (message) => made.errors.push(message),
    onRestart: () => {
      made.restarts += 1;
    },
    ...options,
  });
  return made;
}

beforeEach(() => mock.timers.enable({ apis: ['setInterval', 'Date'] }));
// Ticks a second at a time, so that the clock a callback reads is the time it fires at.
const seconds = (n) => {
  for (let i = 0; i < n; i++) mock.timers.tick(1000);
};
afterEach(() => mock.timers.reset());

test('a worker that answers is never replaced, and heartbeats do not reach the section', () => {
  const made = watch({ silenceMs: 6000 });
  made.watched.postMessage({ type: 'init' });
  made.workers[0].answer({ type: HEARTBEAT });
  made.workers[0].answer({ type: 'state', state: 'idle' });
  seconds(60);
  assert.equal(made.workers.length, 1);
  assert.deepEqual(made.messages, [{ type: 'state', state: 'idle' }]);
  assert.deepEqual(made.errors, []);
});

test('a silent worker is terminated after silenceMs and a fresh one gets every message, in order', () => {
  const made = watch({ silenceMs: 6000 });
  made.watched.postMessage({ type: 'init', task: 'fra-eng' });
  seconds(3);
  made.watched.postMessage({ type: 'config', seed: 7 });
  seconds(2);
  assert.equal(made.workers.length, 1, 'not yet: 5 s of silence');
  seconds(1);
  assert.equal(made.workers.length, 2);
  assert.ok(made.workers[0].terminated);
  assert.equal(made.restarts, 1);
  assert.deepEqual(made.workers[1].received, [{ type: 'init', task: 'fra-eng' }, { type: 'config', seed: 7 }]);
  // Once it answers, later messages go to it alone and are not kept for a replay.
  made.workers[1].answer({ type: 'state', state: 'idle' });
  made.watched.postMessage({ type: 'start' });
  seconds(60);
  assert.equal(made.workers.length, 2);
  assert.deepEqual(made.workers[1].received.at(-1), { type: 'start' });
  assert.deepEqual(made.messages, [{ type: 'state', state: 'idle' }]);
});

test('a slow worker that keeps beating is left to load', () => {
  const made = watch({ silenceMs: 6000 });
  made.watched.postMessage({ type: 'init' });
  for (let second = 0; second < 30; second++) {
    seconds(1);
    made.workers[0].answer({ type: HEARTBEAT });
  }
  assert.equal(made.workers.length, 1);
  assert.equal(made.workers[0].terminated, false);
});

test('after its restarts a silent worker is reported, and no more are started', () => {
  const made = watch({ silenceMs: 6000, restarts: 2 });
  made.watched.postMessage({ type: 'init' });
  seconds(60);
  assert.equal(made.workers.length, 3);
  assert.ok(made.workers.every((w) => w.terminated));
  assert.deepEqual(made.errors, ['the worker did not answer for 6 s while loading, 3 times']);
});

test('a worker error goes to the section and ends the watch; terminate() ends the worker', () => {
  const made = watch({ silenceMs: 6000 });
  made.workers[0].fail('SyntaxError: bad module');
  seconds(60);
  assert.deepEqual(made.errors, ['SyntaxError: bad module']);
  assert.equal(made.workers.length, 1);
  made.watched.terminate();
  assert.ok(made.workers[0].terminated);
});

test('a deferred worker is made only when startWhen starts it, and gets what was posted before', () => {
  let start;
  const made = watch({ silenceMs: 6000, startWhen: (go) => {
    start = go;
  } });
  made.watched.postMessage({ type: 'init' });
  made.watched.postMessage({ type: 'config', seed: 3 });
  seconds(60);
  assert.equal(made.workers.length, 0, 'nothing made, nothing timed out');
  start();
  assert.deepEqual(made.workers[0].received, [{ type: 'init' }, { type: 'config', seed: 3 }]);
  // Its silence counts from its start.
  seconds(5);
  assert.equal(made.workers.length, 1);
  seconds(1);
  assert.equal(made.workers.length, 2);
});

test('a deferred worker terminated before its start is never made', () => {
  let start;
  const made = watch({ startWhen: (go) => {
    start = go;
  } });
  made.watched.postMessage({ type: 'init' });
  made.watched.terminate();
  start();
  seconds(60);
  assert.equal(made.workers.length, 0);
  assert.deepEqual(made.errors, []);
});

test('heartbeatWhile beats every second until its promise settles, and passes its result on', async () => {
  const posted = [];
  globalThis.postMessage = (m) => posted.push(m); // a worker's global, which Node's main thread lacks
  try {
    let finish;
    const result = heartbeatWhile(new Promise((resolve) => {
      finish = resolve;
    }));
    seconds(3);
    assert.equal(posted.length, 4, 'one at once, then one a second');
    assert.ok(posted.every((m) => m.type === HEARTBEAT));
    finish('loaded');
    assert.equal(await result, 'loaded');
    seconds(5);
    assert.equal(posted.length, 4, 'none after it settled');
    await assert.rejects(heartbeatWhile(Promise.reject(new Error('no wasm'))), /no wasm/);
  } finally {
    delete globalThis.postMessage;
  }
});
