// Rollup with @rollup/plugin-node-resolve alone: bundles app.js and the package's glue (as chunks
// of their own, for the dynamic imports) and leaves `new URL('./wasm/…', import.meta.url)` as
// written, emitting no .wasm or worker file: the README's copy step supplies them.
import { join } from 'node:path';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { rollup } from 'rollup';
import { copyPage, copyWasmFolder, filesUnder } from './static.js';

/** Whether the README's copy step supplies the .wasm files (static.js). */
export const needsCopy = true;

/** Bundles `project` into `out` (static.js). */
export async function bundle(project, out) {
  const warnings = [];
  const build = await rollup({
    input: join(project, 'app.js'),
    plugins: [nodeResolve()],
    onLog: (level, log) => {
      if (level === 'warn') warnings.push(`${log.id ?? '?'}: ${log.message}`);
    },
  });
  await build.write({ dir: out, format: 'es', entryFileNames: '[name].js' });
  await build.close();
  const files = filesUnder(out);
  copyWasmFolder(project, out);
  copyPage(project, out);
  return { warnings, files };
}
