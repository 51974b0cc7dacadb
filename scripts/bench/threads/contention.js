// The contention section of `npm run bench`: our threads when the cores are not all ours. The
// workloads of the threads section (workloads.js, at --quick's sizes) on one thread, on 'auto'
// (every core, up to 8) and on twice that (more threads than cores, as WebKit's
// hardwareConcurrency of 4 gives a 2-core machine), first on an idle machine, then beside one
// busy loop per core (worker threads that spin, standing in for a user's other work). Each
// call's speed ÷ one thread's, its loads timed in turns in this one process (medians).
// docs/threads.md ("Contended cores") says what the pool does about it.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { loadAttention } from '../../../dist/index.js';
import { measureInTurns } from '../../../web/shared/timing.js';
import { measured } from '../goals.js';
import { runAlone } from '../shared/standalone.js';
import { threadWorkloads } from './workloads.js';

// One worker thread per core that spins until terminated.
function startBusyLoops(count) {
  return Array.from({ length: count }, () => new Worker('for (;;) {}', { eval: true }));
}

async function run({ quick, log }) {
  const cores = Math.min(availableParallelism(), 8);
  if (cores < 2) return { results: { skipped: 'one core' }, notes: ['one core: nothing to contend for'] };
  const counts = [1, cores, 2 * cores];
  const loads = [];
  for (const threads of counts) loads.push(await loadAttention({ threads }));
  const workloads = threadWorkloads({ quick: true });
  const results = [], rows = [], goals = [];
  try {
    for (const busy of [0, cores]) {
      const loops = startBusyLoops(busy);
      try {
        for (const workload of workloads) {
          const calls = loads.map((attn) => workload.make(attn));
          try {
            const times = await measureInTurns(calls.map(({ fn }) => ({ fn })), { samples: quick ? 5 : 11, sampleMs: 50 });
            const speeds = times.map(({ ms }) => times[0].ms / ms);
            const setting = busy ? `beside ${busy} busy loops` : 'idle';
            results.push({ workload: workload.name, busy, counts, ms: times.map(({ ms }) => ms), speeds });
            rows.push([workload.name, setting, ...speeds.slice(1).map((s) => s.toFixed(2))]);
            log(`  ${workload.name}, ${setting}: ${counts.slice(1).map((t, i) => `${t} threads ${speeds[i + 1].toFixed(2)}`).join(', ')} of one thread's speed`);
            if (busy) goals.push(measured('threadsContention', workload.name, speeds[1], `${cores} threads beside ${busy} busy loops`));
          } finally {
            for (const call of calls) call.release?.();
          }
        }
      } finally {
        await Promise.all(loops.map((loop) => loop.terminate()));
      }
    }
  } finally {
    for (const attn of loads) attn.dispose();
  }
  const table = {
    title: `Threads on contended cores: speed ÷ one thread's (${cores} cores; loads timed in turns, medians)`,
    header: ['call', 'the cores', `${cores} threads ('auto')`, `${2 * cores} threads`],
    rows,
  };
  return { results, tables: [table], goals };
}

const section = { name: 'contention', run };
export default section;

await runAlone(import.meta, section);
