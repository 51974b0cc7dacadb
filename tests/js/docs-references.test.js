// The files the README and docs/*.md cite exist: a backticked path (`cpp/src/parallel/split.hpp`,
// or one relative to docs/, cpp/include/, cpp/src/ or dist/, as the docs write include paths
// and the package's files), a backticked name of one of the repository's own kinds of source
// file (`thread_pool.cpp`), and a `file:line` citation's line. A rename or a move then fails
// here rather than on a reader. Names of other projects' files (a checkpoint's `config.json`,
// emscripten's `Unwind-wasm.c`) are not of those kinds and are not checked; generated paths
// (build/, the package's wasm/ names) neither.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';

import { documentationFiles } from './readme-blocks.js';

const repo = process.env.ATTN_REPO;
const tracked = execFileSync('git', ['ls-files'], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
const trackedNames = new Set(tracked.map((file) => basename(file)));
const withoutCode = (markdown) => markdown.replace(/^```[\s\S]*?^```/gm, '');

const FILE = /\.(js|mjs|ts|cpp|hpp|py|sh|cmake|md|json|css|html|safetensors)$/;
const SOURCE = /\.(js|mjs|cpp|hpp|py|sh|cmake)$/; // a bare name of these kinds is this repository's
const GENERATED = /^(build|dist|node_modules|wasm)\//;
const ROOTS = ['', 'docs', 'cpp/include', 'cpp/src', 'dist'];

// Where a cited path is, or null.
function locate(path) {
  if (!path.includes('/')) return trackedNames.has(path) ? tracked.find((f) => basename(f) === path) : null;
  const root = ROOTS.find((r) => existsSync(join(repo, r, path)));
  return root === undefined ? null : join(root, path);
}

for (const file of documentationFiles(repo)) {
  test(`${file}: the files and lines it cites exist`, () => {
    const text = withoutCode(readFileSync(join(repo, file), 'utf8'));
    for (const [, span] of text.matchAll(/`([^`\s]+)`/g)) {
      const [, path, line] = span.match(/^(.*?)(?::(\d+)(?:-\d+)?)?$/);
      if (!FILE.test(path) || /[{}*<>…]/.test(path) || GENERATED.test(path)) continue;
      if (!path.includes('/') && !SOURCE.test(path)) continue;
      const found = locate(path);
      assert.ok(found, `${file} cites \`${span}\`: no such file in the repository`);
      if (line) {
        const lines = readFileSync(join(repo, found), 'utf8').split('\n').length;
        assert.ok(Number(line) <= lines, `${file} cites \`${span}\`: ${found} has ${lines} lines`);
      }
    }
  });
}
