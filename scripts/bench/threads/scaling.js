// The scaling section of `npm run bench` (issue 32): how the core's splits would scale on 2 to 16
// cores, which this 2-core machine cannot show. cpp/bench/scaling_bench.cpp runs each workload
// on a simulated pool of T threads (cpp/src/parallel/pool_trace.hpp: every split chosen as for
// T, its tasks timed one after another) and replays the pool's claim order on T threads; beside
// it, the speedup measured on this machine's 2 threads, which the prediction for 2 approaches
// from above (shared memory bandwidth and waking the workers are left out). Natively built
// (shared/native.js); the splits are the wasm builds' code.
import { execFileSync } from 'node:child_process';
import { measured } from '../goals.js';
import { nativeBench } from '../shared/native.js';
import { runAlone } from '../shared/standalone.js';

const COUNTS = ['2', '4', '8', '16'];
const fmt = (x, digits = 2) => x.toFixed(digits);

// The goals' workloads, by the names scaling_bench gives them.
const ATTENTION = [/^SDPA (causal )?n = (2048|4096)/, /^SDPA backward n = (2048|4096)/, /^multi-head .* n = 1024$/];
const TRAINING = /^Transformer training step/;

async function run({ quick, log }) {
  let rows;
  try {
    const output = execFileSync(nativeBench('scaling_bench'), quick ? ['--quick'] : [], { encoding: 'utf8' });
    rows = output.trim().split('\n').map((line) => JSON.parse(line));
  } catch (error) {
    log(`scaling: skipped (${String(error.message).split('\n')[0]})`);
    return { results: [], goals: [measured('scalingAttention', '8 threads', null, 'not built'), measured('scalingTraining', '8 threads', null, 'not built')] };
  }
  const table = {
    title: 'Scaling, predicted from one-thread task times (speedup over one thread), beside 2 threads measured here; regions, tasks, the longest task and the share outside regions at 16',
    header: ['workload', '1 thread ms', 'measured 2', ...COUNTS.map((t) => `predicted ${t}`), 'regions', 'tasks', 'longest ms', 'serial'],
    rows: rows.map((r) => [r.workload, fmt(r.oneMs, 1), fmt(r.measured2), ...COUNTS.map((t) => fmt(r.predicted[t])), r.regions, r.tasks, fmt(r.longestMs), `${fmt(100 * r.serialShare, 1)}%`]),
  };
  const goals = [
    ...rows.filter((r) => ATTENTION.some((re) => re.test(r.workload))).map((r) => measured('scalingAttention', r.workload, r.predicted['8'], `predicted at 2: ${fmt(r.predicted['2'])}, measured ${fmt(r.measured2)}`)),
    ...rows.filter((r) => TRAINING.test(r.workload)).map((r) => measured('scalingTraining', r.workload, r.predicted['8'], `predicted at 2: ${fmt(r.predicted['2'])}, measured ${fmt(r.measured2)}`)),
  ];
  return { results: rows, tables: [table], goals };
}

const section = { name: 'scaling', run };
export default section;

await runAlone(import.meta, section);
