// The page: a Vite app rooted in web/, built to build/site/ with relative paths (base './') so
// the static site can be hosted from any folder. The page imports the package by name; the
// alias points at the built wrapper in dist/ (scripts/build-wasm.sh), the way users import it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

import { ISOLATION_HEADERS } from '../scripts/serve.js';

const repo = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));

export default defineConfig({
  root: repo('web'),
  base: './',
  resolve: {
    alias: { 'attention-wasm': repo('dist/index.js') },
  },
  // Cross-origin isolated, as `npm start` serves it, so that the package runs on threads.
  server: {
    port: Number(process.env.PORT ?? 8080),
    fs: { allow: [repo('.')] },
    headers: ISOLATION_HEADERS,
  },
  preview: { headers: ISOLATION_HEADERS },
  // The sections' workers (benchmark/worker.js, seq2seq/train-worker.js) are module workers;
  // the package they load imports its wasm glue dynamically, which needs ES-module output.
  worker: { format: 'es' },
  build: {
    outDir: repo('build/site'),
    emptyOutDir: true,
    target: 'es2022',
    // KaTeX's fonts and the two .wasm files are emitted as files, never inlined as data: URLs.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1000,
  },
});
