// webpack 5 in production mode: emits the .wasm files, the worker script and the glue it imports
// on its own, from the package's `new URL(…, import.meta.url)`s. Its one warning is a size hint
// naming the three .wasm files (360–422 KiB, over its 244 KiB): they are the package's code, not
// something to split, so the README tells users to leave them out of the hint, as done here.
import webpack from 'webpack';
import { copyPage, filesUnder } from './static.js';

/** Whether the README's copy step supplies the .wasm files (static.js). */
export const needsCopy = false;

/** Bundles `project` into `out` (static.js). */
export async function bundle(project, out) {
  const compiler = webpack({
    mode: 'production',
    context: project,
    entry: './app.js',
    output: { path: out, filename: 'app.js', clean: true },
    performance: { assetFilter: (file) => !/\.(map|wasm)$/.test(file) }, // webpack's default leaves out .map
  });
  const stats = await new Promise((done, fail) => compiler.run((error, result) => (error ? fail(error) : done(result))));
  await new Promise((done) => compiler.close(done));
  const { errors, warnings } = stats.toJson({ all: false, errors: true, warnings: true });
  if (errors.length) throw new Error(`webpack: ${errors.map((e) => e.message).join('\n')}`);
  copyPage(project, out);
  return { warnings: warnings.map((warning) => `${warning.moduleName ?? '?'}: ${warning.message}`), files: filesUnder(out) };
}
