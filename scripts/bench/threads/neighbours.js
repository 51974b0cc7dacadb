// The parent side of neighbour.js: `count` worker threads, each running a copy of one
// workload on a one-thread module of its own. An entry of measureInTurns given { before, after }
// from here is timed while every copy runs: before() starts them and returns once all have
// begun a call; after() stops them and returns once their last calls have ended, so no copy
// runs into another entry's sample.
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

// Word 0 is the parent's command; word 1 + i is neighbour i's status.
export const NEIGHBOUR = { IDLE: 0, RUN: 1, NEXT: 2, RUNNING: 3 };
const SCRIPT = fileURLToPath(new URL('./neighbour.js', import.meta.url));

const message = async (worker, expected) => {
  const [got] = await once(worker, 'message');
  if (got !== expected) throw new Error(`neighbour.js said ${got}, expected ${expected}`);
};

export async function startNeighbours(count, { quick }) {
  const control = new SharedArrayBuffer(4 * (1 + count));
  const words = new Int32Array(control);
  const workers = Array.from({ length: count }, (_, i) => new Worker(SCRIPT, { workerData: { quick, control, slot: 1 + i } }));
  await Promise.all(workers.map((worker) => message(worker, 'loaded')));
  const command = (value) => {
    Atomics.store(words, 0, value);
    Atomics.notify(words, 0);
  };
  const awaitStatus = (slot, wanted) => {
    for (let now; (now = Atomics.load(words, slot)) !== wanted;) Atomics.wait(words, slot, now);
  };
  return {
    /** Builds workload `index` in every neighbour; they wait, idle, for before(). */
    async build(index) {
      await Promise.all(workers.map((worker) => {
        worker.postMessage({ index });
        return message(worker, 'ready');
      }));
    },
    before() {
      command(NEIGHBOUR.RUN);
      workers.forEach((_, i) => awaitStatus(1 + i, NEIGHBOUR.RUNNING));
    },
    after() {
      command(NEIGHBOUR.IDLE);
      workers.forEach((_, i) => awaitStatus(1 + i, NEIGHBOUR.IDLE));
    },
    /** Releases the workload built last. */
    async release() {
      const released = workers.map((worker) => message(worker, 'released'));
      command(NEIGHBOUR.NEXT);
      await Promise.all(released);
      command(NEIGHBOUR.IDLE);
    },
    terminate: () => Promise.all(workers.map((worker) => worker.terminate())),
  };
}
