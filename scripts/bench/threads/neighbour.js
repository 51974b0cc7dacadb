// A worker thread of child.js: a copy of one workload on a module of its own with one
// thread, run beside the parent's one-thread samples for the machine's bound (how fast T
// independent copies run at once against one alone: what T perfectly divided threads could
// reach on this machine, in the same run). The parent posts { index } to build workload `index`
// of threadWorkloads; the copy then runs while the shared command word says RUN, and reports in
// its own status word when it has started and stopped, so that the parent times its calls only
// while every copy is running. NEXT releases the workload.
import { parentPort, workerData } from 'node:worker_threads';
import { loadAttention } from '../../../dist/index.js';
import { NEIGHBOUR } from './neighbours.js';
import { threadWorkloads } from './workloads.js';

const { quick, control, slot } = workerData;
const words = new Int32Array(control);
const attn = await loadAttention({ threads: 1 });
const workloads = threadWorkloads({ quick });

parentPort.on('message', ({ index }) => {
  const { fn, release } = workloads[index].make(attn);
  fn();
  parentPort.postMessage('ready');
  for (;;) {
    Atomics.wait(words, 0, NEIGHBOUR.IDLE);
    if (Atomics.load(words, 0) === NEIGHBOUR.NEXT) break;
    Atomics.store(words, slot, NEIGHBOUR.RUNNING);
    Atomics.notify(words, slot);
    while (Atomics.load(words, 0) === NEIGHBOUR.RUN) fn();
    Atomics.store(words, slot, NEIGHBOUR.IDLE);
    Atomics.notify(words, slot);
  }
  release?.();
  parentPort.postMessage('released');
});
parentPort.postMessage('loaded');
