// Trains the model that ships with the page's section 7 (in-context learning: induction heads)
// and writes it to web/public/models/: induction.safetensors (the state dict under Hugging
// Face's GPT-2 names) and induction.json (the seed, the steps, the training seconds on the
// machine that ran this, and the measurements every MEASURE_EVERY steps as the page takes them),
// so the page draws the run's curves and its phase change before anyone trains. The page's
// worker loads both (web/src/sections/induction/train-worker.js).
//
// Run after scripts/build-wasm.sh, from the repository root:
//   node scripts/train-induction-model.js             # seed 3, 2000 steps
//   node scripts/train-induction-model.js --dry-run   # train and report, write nothing
//
// Deterministic: the scalar wasm build (no SIMD reassociation differences between machines) on
// one thread, so a rerun writes the same weights (the seconds are this machine's).
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadAttention, writeSafetensors } from '../dist/index.js';
import { InductionRun, MEASURE_EVERY, phaseChange } from '../web/src/sections/induction/task.js';

const OUT = new URL('../web/public/models/', import.meta.url);

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '3' },
    steps: { type: 'string', default: '2000' },
    'dry-run': { type: 'boolean', default: false },
  },
});

const attn = await loadAttention({ simd: false, threads: 1 });
const run = new InductionRun(attn, Number(values.seed));
let seconds = 0;
run.measure(0);
while (run.steps < Number(values.steps)) {
  const t0 = performance.now();
  for (let i = 0; i < MEASURE_EVERY; i++) run.step();
  seconds += (performance.now() - t0) / 1000;
  const { measurement: m } = run.measure(Number(seconds.toFixed(2)));
  if (m.step % 250 === 0) console.log(`step ${m.step}, ${seconds.toFixed(1)} s: loss first ${m.firstLoss.toFixed(2)}, repeated ${m.repeatedLoss.toFixed(2)}, accuracy ${m.repeatedAccuracy.toFixed(2)}, best layer-1 prefix matching ${Math.max(...m.prefixMatching[1]).toFixed(2)}`);
}
const phase = phaseChange(run.history);
console.log(phase ? `phase change at step ${phase.step} (${phase.seconds} s)` : 'no phase change');
if (!values['dry-run']) {
  const round = (x) => (typeof x === 'number' ? Number(x.toFixed(4)) : x);
  const history = JSON.parse(JSON.stringify(run.history, (key, x) => round(x)));
  const meta = { seed: run.seed, steps: run.steps, seconds: Number(seconds.toFixed(2)), history };
  await writeFile(new URL('induction.safetensors', OUT), writeSafetensors(run.model.stateDict()));
  await writeFile(new URL('induction.json', OUT), `${JSON.stringify(meta)}\n`);
  console.log(`wrote ${new URL('induction.safetensors', OUT).pathname} and induction.json`);
}
