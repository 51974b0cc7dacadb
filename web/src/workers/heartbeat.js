// The worker's side of watched-worker.js: while a worker loads, it posts a heartbeat every
// second, so that the page can tell a worker that is slow to load (a loaded machine) from one
// whose thread is blocked for good, which posts nothing.

export const HEARTBEAT = 'heartbeat';
const PERIOD_MS = 1000;

/** Posts heartbeats until `loading` settles; returns `loading`. */
export function heartbeatWhile(loading) {
  const beat = () => postMessage({ type: HEARTBEAT });
  beat();
  const timer = setInterval(beat, PERIOD_MS);
  return loading.finally(() => clearInterval(timer));
}
