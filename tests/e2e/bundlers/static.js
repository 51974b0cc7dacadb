// What the bundler modules beside this file share. Each exports
//   bundle(project, out): bundles `project` (index.html loading ./app.js, node_modules) into
//     `out` as its users would, and resolves to { warnings, files }: the warnings it printed, and
//     the files it wrote itself (before any copy step), relative to `out`;
//   needsCopy: whether it leaves the .wasm files, worker script and glue to the README's copy
//     step (the package's dist/wasm/ folder copied to wasm/ beside the bundle, which is where
//     the package's `new URL('./wasm/…', import.meta.url)`s point once bundled into it).
import { copyFileSync, cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `folder`, relative to it. */
export const filesUnder = (folder) => readdirSync(folder, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1));

/** Copies `project`'s index.html into `out`, for the bundlers without an HTML step. */
export function copyPage(project, out) {
  copyFileSync(join(project, 'index.html'), join(out, 'index.html'));
}

/** The README's copy step: node_modules/attention-wasm/dist/wasm/ of `project` to `out`/wasm/. */
export function copyWasmFolder(project, out) {
  cpSync(join(project, 'node_modules/attention-wasm/dist/wasm'), join(out, 'wasm'), { recursive: true });
}
