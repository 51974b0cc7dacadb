// The examples of the documentation, read the same way by every test that runs or checks them:
// readme.test.js runs them, scripts/test-types.sh type-checks them (extract-readme.js) and
// docs-links.test.js follows their links. scripts/test-readme-cpp.sh reads the same files for
// its ```cpp blocks.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';

// The files with examples, relative to the repository root: the README and the docs beside it.
export function documentationFiles(repo) {
  const docs = readdirSync(join(repo, 'docs')).filter((name) => name.endsWith('.md')).sort();
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

// The ```js code blocks of a Markdown text, in order.
export function jsBlocks(markdown) {
  return [...markdown.matchAll(/^```(?:js|javascript|mjs)[^\S\n]*\n([\s\S]*?)^```[^\S\n]*$/gm)].map((m) => m[1]);
}

// Whether a block is a whole program: it imports the package itself.
export function importsPackage(code) {
  return /\bfrom\s*['"]attention-wasm['"]/.test(code);
}

// Whether a block uses the package: imports it, or calls the module object `attn` loaded earlier.
export function usesPackage(code) {
  return importsPackage(code) || /\battn\./.test(code);
}
