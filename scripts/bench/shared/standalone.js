// A section run alone. Every section file ends with `await runAlone(import.meta, section)`, which
// does nothing when the file is imported (run.js) and, when the file is the command, e.g.
//   node --experimental-wasm-relaxed-simd scripts/bench/attention/masked.js --quick
// (after `npm run build:wasm`), runs the section as `npm run bench` would: from the repository's
// root, with its options parsed (--quick, and any the section declares), its tables, notes and
// goals printed, and its results written to build/bench/NAME.json (the shape of results.json,
// which status.js reads).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createContext } from './context.js';
import { printOutcome, printSummary } from './report.js';
import { writeResults } from './results.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

export async function runAlone(meta, section) {
  if (!process.argv[1] || meta.url !== pathToFileURL(process.argv[1]).href) return;
  process.chdir(ROOT); // the builds, task files and results live at the repository's paths
  const { values: options } = parseArgs({ options: { quick: { type: 'boolean', default: false }, ...section.options } });
  const context = createContext({ quick: options.quick, options });
  const { results, goals = [], ...printed } = await section.run(context);
  printOutcome(printed, context.log);
  printSummary([section.name], goals, context.log);
  const path = `build/bench/${section.name}.json`;
  writeResults(path, { quick: options.quick, options, goals, sections: { [section.name]: results } });
  context.log(`wrote ${path}`);
}
