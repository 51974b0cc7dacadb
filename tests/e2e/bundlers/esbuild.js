// esbuild: bundles app.js as an ES module and leaves `new URL('./wasm/…', import.meta.url)` as
// written, emitting no .wasm or worker file: the README's copy step supplies them.
import { join } from 'node:path';
import { build } from 'esbuild';
import { copyPage, copyWasmFolder, filesUnder } from './static.js';

/** Whether the README's copy step supplies the .wasm files (static.js). */
export const needsCopy = true;

/** Bundles `project` into `out` (static.js). */
export async function bundle(project, out) {
  const result = await build({
    entryPoints: [join(project, 'app.js')],
    outdir: out,
    bundle: true,
    format: 'esm', // import.meta.url and the app's top-level await need ES module output
    logLevel: 'silent', // warnings come back in result.warnings instead, for the test to assert on
  });
  const files = filesUnder(out);
  copyWasmFolder(project, out);
  copyPage(project, out);
  return { warnings: result.warnings.map((warning) => `${warning.location?.file ?? '?'}: ${warning.text}`), files };
}
