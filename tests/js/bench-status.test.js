// docs/performance.md's status of the performance goals is generated, not typed: the table between
// its markers must be the one scripts/bench/status.js makes from the committed record of the
// bench's runs (docs/bench-results.json), and every measurement in that record must name a goal
// of scripts/bench/goals.js. After a new run: `node scripts/bench/status.js --record
// build/bench/results.json && node scripts/bench/status.js --write`.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { importRepo, readRepoJson } from './repo-module.js';

const { BEGIN, DOC, END, RECORD, statusTable } = await importRepo('scripts/bench/status.js');
const { GOALS } = await importRepo('scripts/bench/goals.js');
const record = readRepoJson(RECORD);

test(`${DOC}'s status table is the one scripts/bench/status.js generates from ${RECORD}`, () => {
  const doc = readFileSync(join(process.env.ATTN_REPO, DOC), 'utf8');
  const begin = doc.indexOf(BEGIN), end = doc.indexOf(END);
  assert.ok(begin >= 0 && end > begin, `${DOC} has no status table between its markers`);
  assert.equal(doc.slice(begin + BEGIN.length, end).trim(), statusTable(record.runs),
    'regenerate it: node scripts/bench/status.js --write');
});

test(`every run of ${RECORD} says when, where and how, and measures goals of goals.js`, () => {
  for (const run of record.runs) {
    for (const key of ['date', 'machine', 'command']) assert.ok(run[key], `a run without its ${key}: ${JSON.stringify(run).slice(0, 120)}`);
    for (const m of run.goals) {
      assert.ok(m.goal in GOALS, `${run.date}: '${m.goal}' is not a goal of scripts/bench/goals.js`);
      assert.ok(m.value === null || Number.isFinite(m.value), `${run.date}, ${m.goal} at ${m.at}: value ${m.value}`);
    }
  }
});
