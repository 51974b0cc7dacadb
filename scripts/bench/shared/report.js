// How a run prints what its sections returned: each section's tables and notes as it ends, and
// at the end the summary, goal by goal (goals.js), every measurement with its verdict. A goal of
// a section that ran but did not measure it (a size --quick leaves out, a peer that failed) says
// so, so that no goal of a run drops out of its summary unseen.
import { GOALS, verdict } from '../goals.js';
import { printTable } from './table.js';

/** A section's tables, then its notes (lines that are not goals: heaps, completions, skips). */
export function printOutcome({ tables = [], notes = [] }, log = console.log) {
  for (const table of tables) printTable(table, log);
  if (notes.length) log('');
  for (const line of notes) log(`  ${line}`);
}

/** The goals of the sections named in `ran`, each with its measurements from `measurements`. */
export function printSummary(ran, measurements, log = console.log) {
  const goals = Object.entries(GOALS).filter(([, g]) => ran.includes(g.section));
  if (!goals.length) return;
  log('\nSummary: the goals of scripts/bench/goals.js that these sections measure');
  for (const [id, goal] of goals) {
    log(`  ${goal.what}: goal ${goal.relation} ${goal.target} (issue ${goal.issue})`);
    const mine = measurements.filter((m) => m.goal === id);
    if (!mine.length) log('    not measured in this run');
    for (const m of mine) log(`    ${m.at}: ${verdict(id, m.value)}${m.detail ? `; ${m.detail}` : ''}`);
  }
}
