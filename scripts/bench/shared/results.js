// The results file a run writes (build/bench/results.json for `npm run bench`, build/bench/NAME.json
// for a section run alone): when, on what machine and by which command, each goal's measurements
// (goals.js), and every section's own results. status.js reads the date, the machine, the
// command and the goals; the rest is there for whoever wants the figures behind them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { machine } from './machine.js';

export function writeResults(path, { quick, goals, sections, options }) {
  const command = ['node', ...process.execArgv, ...process.argv.slice(1).map((arg) => relative(process.cwd(), arg) || arg)].join(' ');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), command, quick, options, goals, sections }, null, 2)}\n`);
}
