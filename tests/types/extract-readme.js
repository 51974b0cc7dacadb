// Writes each ```js block of the README and docs/*.md that uses the package to
// <out>/<file>-<n>.mjs (README-1.mjs, docs-training-1.mjs, ...), as an ES module (so top-level
// await is allowed), for tsc to check against the installed package.
// Usage: node extract-readme.js REPO_ROOT OUT_DIR
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { documentationFiles, jsBlocks, usesPackage } from '../js/readme-blocks.js';

const [repo, out] = process.argv.slice(2);
let count = 0;
for (const file of documentationFiles(repo)) {
  const blocks = jsBlocks(readFileSync(join(repo, file), 'utf8')).filter(usesPackage);
  if (file === 'README.md' && blocks.length === 0) {
    console.error(`${file}: no \`\`\`js block uses 'attention-wasm'`);
    process.exit(1);
  }
  const stem = file.replace(/\.md$/, '').replace(/\W/g, '-');
  blocks.forEach((code, i) => writeFileSync(join(out, `${stem}-${i + 1}.mjs`), `${code}\nexport {};\n`));
  count += blocks.length;
}
console.log(`types: ${count} examples from the README and docs`);
