// Writes each ```js block of README.md that uses the package to <out>/readme-<n>.mjs, as an ES
// module (so top-level await is allowed), for tsc to check against the installed package.
// Usage: node extract-readme.js README.md OUT_DIR
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { jsBlocks, usesPackage } from '../js/readme-blocks.js';

const [readme, out] = process.argv.slice(2);
const blocks = jsBlocks(readFileSync(readme, 'utf8')).filter(usesPackage);
if (blocks.length === 0) {
  console.error(`${readme}: no \`\`\`js block uses 'attention-wasm'`);
  process.exit(1);
}
blocks.forEach((code, i) => writeFileSync(join(out, `readme-${i + 1}.mjs`), `${code}\nexport {};\n`));
console.log(`types: ${blocks.length} README examples`);
