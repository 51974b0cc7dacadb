// The usage examples of the README and docs/*.md run as written: every ```js block that imports
// 'attention-wasm' (a whole program; blocks that continue an earlier one are type-checked by
// scripts/test-types.sh instead) is saved as a module in the consumer folder (where the packed
// package is installed) and run with node; each must exit 0. A README without such a block is a
// failure.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { documentationFiles, importsPackage, jsBlocks } from './readme-blocks.js';

// The consumer folder: this file is in its tests/js/ (scripts/test-js.sh).
const consumer = join(dirname(fileURLToPath(import.meta.url)), '../..');

function examples() {
  const repo = process.env.ATTN_REPO;
  assert.ok(repo, 'ATTN_REPO (the repository root) is not set');
  return documentationFiles(repo).flatMap((file) =>
    jsBlocks(readFileSync(join(repo, file), 'utf8'))
      .filter(importsPackage)
      .map((code, index) => ({ file, number: index + 1, code })),
  );
}

const programs = examples();

test("README.md has ```js examples that import 'attention-wasm'", () => {
  assert.ok(programs.some(({ file }) => file === 'README.md'), "README.md has no ```js code block that imports 'attention-wasm'");
});

programs.forEach(({ file, number, code }) => {
  const firstLine = code.split('\n').find((line) => line.startsWith('//')) ?? `example ${number}`;
  test(`${file}'s \`\`\`js example ${number} runs and exits 0 (${firstLine.slice(0, 60)})`, () => {
    const script = join(consumer, `readme-example-${process.pid}-${file.replace(/\W/g, '-')}-${number}.mjs`);
    writeFileSync(script, code);
    try {
      const run = spawnSync(process.execPath, [script], { cwd: consumer, encoding: 'utf8', timeout: 60000 });
      assert.equal(run.error, undefined, `could not run the example: ${run.error}`);
      assert.equal(run.status, 0, `${file}'s example ${number} exited with ${run.status} (signal ${run.signal})\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`);
    } finally {
      rmSync(script, { force: true });
    }
  });
});
