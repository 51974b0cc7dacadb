// A worker that is replaced when it stops answering while it loads. Firefox ESR (153, headless)
// sometimes never returns from `new Worker()` called inside a worker: in a page whose two module
// workers each made one nested worker at once, 2 to 4 loads in 40 hung (docs/threads.md, "Known
// problems"). The package's threaded build makes its pool's workers that way, so a section
// loading it in its worker stayed "loading" for good. Terminating the blocked worker and starting
// another recovers (every time, in the same experiment), so this does that: until the worker's
// first answer, a worker that posts no heartbeat (heartbeat.js) for `silenceMs` is terminated
// and a fresh one gets the messages the first was sent, in order.

import { HEARTBEAT } from './heartbeat.js';

/**
 * `create()` makes the worker (a literal `new Worker(new URL(…, import.meta.url))`, which
 * bundlers follow); `onMessage(data)` gets every message but heartbeats; `onError(message)`
 * gets the worker's errors and, after `restarts` replacements, its silence. `startWhen(start)`
 * decides when the worker is made (at once by default); messages posted before then wait for
 * it. Returns { postMessage(message), terminate() }.
 */
export function watchedWorker(create, {
  onMessage, onError, silenceMs = 6000, restarts = 3, onRestart = () => {}, startWhen = (start) => start(),
}) {
  let worker = null;
  let sent = []; // the messages sent before the worker's first answer, null after it
  let lastHeard;
  let restartsLeft = restarts;
  let watch = null;
  let ended = false;

  function start() {
    worker = create();
    lastHeard = Date.now();
    worker.addEventListener('message', ({ data }) => {
      lastHeard = Date.now();
      if (data?.type === HEARTBEAT) return;
      answered();
      onMessage(data);
    });
    worker.addEventListener('error', (event) => {
      event.preventDefault();
      answered();
      onError(event.message || 'the worker failed to start');
    });
    for (const message of sent) worker.postMessage(message);
  }

  function answered() {
    sent = null;
    clearInterval(watch);
  }

  function checkSilence() {
    if (sent === null || Date.now() - lastHeard < silenceMs) return;
    worker.terminate();
    if (restartsLeft === 0) {
      answered();
      onError(`the worker did not answer for ${silenceMs / 1000} s while loading, ${restarts + 1} times`);
      return;
    }
    restartsLeft -= 1;
    onRestart();
    start();
  }

  startWhen(() => {
    if (ended) return;
    start();
    watch = setInterval(checkSilence, Math.min(1000, silenceMs / 4));
  });
  return {
    postMessage(message) {
      sent?.push(message);
      worker?.postMessage(message);
    },
    terminate() {
      ended = true;
      answered();
      worker?.terminate();
    },
  };
}
