// Vite: builds the project's index.html as a user's Vite project does. Vite emits the .wasm
// files, the worker script and the glue it imports on its own, from the package's
// `new URL(…, import.meta.url)`s.
import { build, createLogger } from 'vite';
import { filesUnder } from './static.js';

/** Whether the README's copy step supplies the .wasm files (static.js). */
export const needsCopy = false;

/** Bundles `project` into `out` (static.js). */
export async function bundle(project, out) {
  const warnings = [];
  const logger = createLogger('warn');
  const record = (message) => warnings.push(message);
  const customLogger = { ...logger, warn: record, warnOnce: record };
  await build({ root: project, base: './', logLevel: 'warn', customLogger, build: { outDir: out, emptyOutDir: true, target: 'es2022' } });
  return { warnings, files: filesUnder(out) };
}
