// `npm run bench` (scripts/bench.sh): every section of sections.js in one process, in order, each
// printing its tables and notes as it ends, then the summary, goal by goal (goals.js), and the
// results file build/bench/results.json (which status.js turns into docs/performance.md's status
// table) with an SVG chart of the attention rows, build/bench/chart.svg.
//   --quick       small sizes only (n ∈ {128, 512}, d = 64, multi-head at n = 128, no long
//                 sequences), to see that every section runs;
//   --only A,B    those sections alone (their names in sections.js), in the usual order.
// Every runner's output is checked (float64 reference, or our output) before it is timed; a
// disagreement (max abs diff > 1e-3) stops the run. A section that fails otherwise (a build or a
// browser missing here) is reported, its goals left unmeasured, and the run goes on to write its
// results, then exits with status 1.
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { SECTIONS } from './sections.js';
import { PeerMismatchError, oneLine } from './shared/check.js';
import { renderChart } from './shared/chart.js';
import { createContext } from './shared/context.js';
import { printOutcome, printSummary } from './shared/report.js';
import { writeResults } from './shared/results.js';

const started = performance.now();
const { values: { quick, only } } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
const chosen = only ? SECTIONS.filter((s) => only.split(',').includes(s.name)) : SECTIONS;
if (only && chosen.length !== only.split(',').length) {
  throw new Error(`--only ${only}: the sections are ${SECTIONS.map((s) => s.name).join(', ')}`);
}

const context = createContext({ quick });
const goals = [], sections = {};
for (const section of chosen) {
  let outcome;
  try {
    outcome = await section.run(context);
  } catch (error) {
    if (error instanceof PeerMismatchError) throw error;
    context.log(`\nsection ${section.name} failed: ${oneLine(error)}`);
    sections[section.name] = { failed: oneLine(error) };
    process.exitCode = 1;
    continue;
  }
  printOutcome(outcome, context.log);
  goals.push(...outcome.goals ?? []);
  sections[section.name] = outcome.results;
  context.earlier[section.name] = outcome;
}
printSummary(chosen.map((s) => s.name), goals, context.log);

writeResults('build/bench/results.json', { quick, goals, sections });
const { sdpa, mha } = context.earlier; // the sections that ran to their end
const panels = [
  ...[...new Set((sdpa?.results ?? []).map((r) => r.d))].map((d) => ({
    title: `attention [1, n, ${d}], GFLOP/s (higher is better)`, results: sdpa.results.filter((r) => r.d === d),
  })),
  ...(mha ? [{ title: `multi-head self-attention, E = ${mha.results.embedDim}, ${mha.results.numHeads} heads, GFLOP/s`, results: mha.results.results }] : []),
];
writeFileSync('build/bench/chart.svg', renderChart(panels));
console.log(`wrote build/bench/results.json and build/bench/chart.svg (${((performance.now() - started) / 1000).toFixed(0)} s in all)`);
