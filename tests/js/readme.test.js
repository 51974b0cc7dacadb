// The README's usage example runs as written: the first ```js block that imports
// 'attention-wasm' is saved as a module in the consumer folder (where the packed package is
// installed) and run with node; it must exit 0. No such block in README.md is a failure.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { jsBlocks } from './readme-blocks.js';

const consumer = join(dirname(fileURLToPath(import.meta.url)), '..');

function readmeExample() {
  const repo = process.env.ATTN_REPO;
  assert.ok(repo, 'ATTN_REPO (the repository root) is not set');
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  return jsBlocks(readme).find((code) => /\bfrom\s*['"]attention-wasm['"]/.test(code));
}

test("README.md's first ```js example importing 'attention-wasm' runs and exits 0", () => {
  const code = readmeExample();
  assert.ok(code, "README.md has no ```js code block that imports 'attention-wasm'");
  const file = join(consumer, `readme-example-${process.pid}.mjs`);
  writeFileSync(file, code);
  try {
    const run = spawnSync(process.execPath, [file], { cwd: consumer, encoding: 'utf8', timeout: 60000 });
    assert.equal(run.error, undefined, `could not run the example: ${run.error}`);
    assert.equal(run.status, 0, `the README example exited with ${run.status} (signal ${run.signal})\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`);
  } finally {
    rmSync(file, { force: true });
  }
});
