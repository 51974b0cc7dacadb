// The second task: human-written dates -> ISO 8601, "22 nov 2026" -> "2026-11-22". Sources
// are tokenised so that every digit is its own token (a word-level vocabulary of numbers would
// have a token per year), and targets are character tokens "2 0 2 6 - 1 1 - 2 2", so the model
// can align each output digit with an input digit.
//
// Formats are unambiguous by construction: "/" is always month/day/year (US), "." always
// day.month.year, "-" always ISO year-month-day; two-digit years follow POSIX strptime's %y
// (69-99 -> 1969-1999, 00-68 -> 2000-2068), and dates are drawn from 1969-01-01 … 2068-12-31 so
// every two-digit year names one date.

import { uniform } from '../random.js';

export const FIRST_YEAR = 1969;
export const LAST_YEAR = 2068;

export const MONTHS = [
  'january', 'february', 'march', 'april', 'may', 'june',
  'july', 'august', 'september', 'october', 'november', 'december',
];
const ABBREVIATIONS = MONTHS.map((m) => m.slice(0, 3));

const pad2 = (n) => String(n).padStart(2, '0');
const ordinal = (d) => {
  const suffix = d % 10 === 1 && d !== 11 ? 'st' : d % 10 === 2 && d !== 12 ? 'nd' : d % 10 === 3 && d !== 13 ? 'rd' : 'th';
  return `${d}${suffix}`;
};

/**
 * The formats, each (y, m, d, rand) -> the text a person might write; `rand` picks between
 * zero-padded and bare numbers where people write both.
 */
export const DATE_FORMATS = {
  'd mon yyyy': (y, m, d) => `${d} ${ABBREVIATIONS[m - 1]} ${y}`,
  'd month yyyy': (y, m, d) => `${d} ${MONTHS[m - 1]} ${y}`,
  'month d, yyyy': (y, m, d) => `${MONTHS[m - 1]} ${d}, ${y}`,
  'mon d, yyyy': (y, m, d) => `${ABBREVIATIONS[m - 1]} ${d}, ${y}`,
  'month dth, yyyy': (y, m, d) => `${MONTHS[m - 1]} ${ordinal(d)}, ${y}`,
  'the dth of month yyyy': (y, m, d) => `the ${ordinal(d)} of ${MONTHS[m - 1]} ${y}`,
  'm/d/yy': (y, m, d, rand) => (rand() < 0.5 ? `${m}/${d}/${pad2(y % 100)}` : `${pad2(m)}/${pad2(d)}/${pad2(y % 100)}`),
  'm/d/yyyy': (y, m, d, rand) => (rand() < 0.5 ? `${m}/${d}/${y}` : `${pad2(m)}/${pad2(d)}/${y}`),
  'dd.mm.yyyy': (y, m, d) => `${pad2(d)}.${pad2(m)}.${y}`,
  'yyyy-mm-dd': (y, m, d) => `${y}-${pad2(m)}-${pad2(d)}`,
};

/**
 * A written date -> source tokens joined by spaces: lowercased, every digit a token, letter
 * runs ("nov", "nd") tokens, every other non-space character a token.
 * "November 22, 2026" -> "november 2 2 , 2 0 2 6".
 */
export function tokenizeDate(text) {
  if (typeof text !== 'string') throw new TypeError(`text: expected a string, given ${typeof text}`);
  return (text.toLowerCase().match(/\p{L}+|\S/gu) ?? []).join(' ');
}

/** The ISO target of a date as character tokens: (2026, 11, 22) -> "2 0 2 6 - 1 1 - 2 2". */
export function isoTarget(y, m, d) {
  return [...`${y}-${pad2(m)}-${pad2(d)}`].join(' ');
}

const DAY_MS = 86400000;

/**
 * `size` distinct pairs [{ src, tgt, raw, format }] from `seed`: a date drawn uniformly from
 * FIRST_YEAR … LAST_YEAR and a format drawn uniformly; `raw` is the text as written, `src` its
 * tokens (tokenizeDate(raw)), `tgt` the ISO date's characters.
 */
export function generateDates({ seed = 0, size = 4000 } = {}) {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`size: expected a positive integer, given ${size}`);
  const rand = uniform(seed);
  const first = Date.UTC(FIRST_YEAR, 0, 1) / DAY_MS;
  const days = Date.UTC(LAST_YEAR + 1, 0, 1) / DAY_MS - first;
  const formats = Object.entries(DATE_FORMATS);
  const pairs = [];
  const seen = new Set();
  for (let attempts = 0; pairs.length < size; attempts++) {
    if (attempts > 100 * size) throw new RangeError(`size: expected at most the number of distinct dates and formats, given ${size}`);
    const date = new Date((first + Math.floor(rand() * days)) * DAY_MS);
    const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    const [format, write] = formats[Math.floor(rand() * formats.length)];
    const raw = write(y, m, d, rand);
    const src = tokenizeDate(raw);
    if (!seen.has(src)) {
      seen.add(src);
      pairs.push({ src, tgt: isoTarget(y, m, d), raw, format });
    }
  }
  return pairs;
}
