// The page's modules are not in the npm package; tests that check them import them from the
// repository named by ATTN_REPO (scripts/test-js.sh sets it), as file URLs.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

function repoPath(path) {
  const repo = process.env.ATTN_REPO;
  assert.ok(repo, 'ATTN_REPO (the repository root) is not set');
  return join(repo, path);
}

/** import() of a module by its path in the repository, e.g. 'web/shared/translation/bleu.js'. */
export const importRepo = (path) => import(pathToFileURL(repoPath(path)).href);

/** A JSON file of the repository, parsed. */
export const readRepoJson = (path) => JSON.parse(readFileSync(repoPath(path), 'utf8'));

/** A file of the repository, as bytes. */
export const readRepoBytes = (path) => new Uint8Array(readFileSync(repoPath(path)));
