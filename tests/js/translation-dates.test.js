// The date-normalisation task: every written date parses back (with a parser written here) to
// the date its ISO target names, all formats occur, the generator is deterministic, and the
// held-out split keeps each date on one side.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { importRepo } from './repo-module.js';

const dir = 'web/shared/translation';
const { DATE_FORMATS, generateDates, isoTarget, tokenizeDate } = await importRepo(`${dir}/dates.js`);
const { splitPairs } = await importRepo(`${dir}/split.js`);
const { preprocess } = await importRepo(`${dir}/text.js`);

const pairs = generateDates({ seed: 0, size: 4000 });

// An independent reading of the written forms -> [year, month, day].
const MONTH_NAMES = 'jan feb mar apr may jun jul aug sep oct nov dec'.split(' ');
const month = (name) => MONTH_NAMES.indexOf(name.slice(0, 3)) + 1;
const century = (yy) => (yy >= 69 ? 1900 + yy : 2000 + yy); // POSIX strptime %y
function parse(text) {
  let m;
  if ((m = text.match(/^(\d{1,2}) ([a-z]+) (\d{4})$/))) return [+m[3], month(m[2]), +m[1]];
  if ((m = text.match(/^([a-z]+) (\d{1,2})(st|nd|rd|th)?, (\d{4})$/))) return [+m[4], month(m[1]), +m[2]];
  if ((m = text.match(/^the (\d{1,2})(st|nd|rd|th) of ([a-z]+) (\d{4})$/))) return [+m[4], month(m[3]), +m[1]];
  if ((m = text.match(/^(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4})$/))) return [m[3].length === 2 ? century(+m[3]) : +m[3], +m[1], +m[2]];
  if ((m = text.match(/^(\d{2})\.(\d{2})\.(\d{4})$/))) return [+m[3], +m[2], +m[1]];
  if ((m = text.match(/^(\d{4})-(\d{2})-(\d{2})$/))) return [+m[1], +m[2], +m[3]];
  return null;
}
const ordinalSuffix = (d) => (d >= 11 && d <= 13 ? 'th' : { 1: 'st', 2: 'nd', 3: 'rd' }[d % 10] ?? 'th');

describe('dates -> ISO', () => {
  test('every written date parses back to its target, a real calendar date in 1969 … 2068', () => {
    for (const { raw, src, tgt } of pairs) {
      const ymd = parse(raw);
      assert.ok(ymd, `unreadable: ${raw}`);
      const [y, m, d] = ymd;
      const iso = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
      assert.equal(tgt.replaceAll(' ', ''), iso, raw);
      assert.equal(new Date(Date.UTC(y, m - 1, d)).toISOString().slice(0, 10), iso, `a real date: ${raw}`);
      assert.ok(y >= 1969 && y <= 2068, raw);
      const ord = raw.match(/(\d+)(st|nd|rd|th)/);
      if (ord) assert.equal(ord[2], ordinalSuffix(+ord[1]), raw);
      assert.equal(src, tokenizeDate(raw));
    }
  });

  test('tokens: one per digit, letter run and mark; targets are 10 characters', () => {
    assert.equal(tokenizeDate('22 Nov 2026'), '2 2 nov 2 0 2 6');
    assert.equal(tokenizeDate('November 22nd, 2026'), 'november 2 2 nd , 2 0 2 6');
    assert.equal(tokenizeDate('11/22/26'), '1 1 / 2 2 / 2 6');
    assert.equal(tokenizeDate('  22.11.2026 '), '2 2 . 1 1 . 2 0 2 6');
    assert.equal(isoTarget(2026, 11, 22), '2 0 2 6 - 1 1 - 2 2');
    assert.equal(isoTarget(1970, 1, 5), '1 9 7 0 - 0 1 - 0 5');
    for (const { src, tgt } of pairs) {
      assert.match(tgt, /^\d \d \d \d - \d \d - \d \d$/);
      assert.equal(preprocess(src), src, `d2l's preprocessing leaves it as it is: ${src}`);
      assert.ok(src.split(' ').length <= 10, src);
    }
  });

  test('all formats occur, about equally often; the sources are distinct', () => {
    const counts = {};
    for (const { format } of pairs) counts[format] = (counts[format] ?? 0) + 1;
    const names = Object.keys(DATE_FORMATS);
    assert.deepEqual(Object.keys(counts).sort(), [...names].sort());
    for (const name of names) assert.ok(counts[name] > 0.5 * (4000 / names.length), `${name}: ${counts[name]}`);
    assert.equal(new Set(pairs.map((p) => p.src)).size, pairs.length);
    // The examples the issue names are among the formats.
    for (const text of ['22 nov 2026', 'november 22, 2026', '11/22/26', '22.11.2026', 'the 22nd of november 2026']) {
      assert.ok(Object.values(DATE_FORMATS).some((write) => write(2026, 11, 22, () => 0.25) === text), text);
    }
  });

  test('the same seed gives the same pairs, another seed others', () => {
    assert.deepEqual(generateDates({ seed: 0, size: 4000 }), pairs);
    assert.notDeepEqual(generateDates({ seed: 1, size: 100 }), pairs.slice(0, 100));
  });

  test('held-out split: about 10%, no date on both sides', () => {
    const { train, heldOut } = splitPairs(pairs, { heldOutFraction: 0.1 });
    assert.ok(heldOut.length > 0.07 * pairs.length && heldOut.length < 0.13 * pairs.length, `${heldOut.length} held out`);
    const trainTargets = new Set(train.map((p) => p.tgt));
    for (const p of heldOut) assert.ok(!trainTargets.has(p.tgt), p.raw);
  });

  test('bad arguments throw', () => {
    assert.throws(() => generateDates({ size: 0 }), /size: expected a positive integer, given 0/);
    assert.throws(() => tokenizeDate(5), /text: expected a string, given number/);
  });
});
