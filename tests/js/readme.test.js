// The README's usage examples run as written: every ```js block that imports 'attention-wasm'
// (a whole program; blocks that continue an earlier one are type-checked by
// scripts/test-types.sh instead) is saved as a module in the consumer folder (where the packed
// package is installed) and run with node; each must exit 0. No such block is a failure.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { jsBlocks } from './readme-blocks.js';

const consumer = join(dirname(fileURLToPath(import.meta.url)), '..');

function readmeExamples() {
  const repo = process.env.ATTN_REPO;
  assert.ok(repo, 'ATTN_REPO (the repository root) is not set');
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  return jsBlocks(readme).filter((code) => /\bfrom\s*['"]attention-wasm['"]/.test(code));
}

const examples = readmeExamples();

test("README.md has ```js examples that import 'attention-wasm'", () => {
  assert.ok(examples.length > 0, "README.md has no ```js code block that imports 'attention-wasm'");
});

examples.forEach((code, index) => {
  const firstLine = code.split('\n').find((line) => line.startsWith('//')) ?? `example ${index + 1}`;
  test(`README.md's \`\`\`js example ${index + 1} runs and exits 0 (${firstLine.slice(0, 60)})`, () => {
    const file = join(consumer, `readme-example-${process.pid}-${index}.mjs`);
    writeFileSync(file, code);
    try {
      const run = spawnSync(process.execPath, [file], { cwd: consumer, encoding: 'utf8', timeout: 60000 });
      assert.equal(run.error, undefined, `could not run the example: ${run.error}`);
      assert.equal(run.status, 0, `the README example exited with ${run.status} (signal ${run.signal})\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
