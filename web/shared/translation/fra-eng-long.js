// Long sentences for the with/without-attention figure: Bahdanau et al.'s point is that a
// decoder reading one fixed vector loses long sentences, and the short corpus (at most 9 source
// tokens) is too short to show it. Here sentences of the short corpus's kinds are joined by "and"
// ("she is tired and we go to the park ." -> "elle est fatiguée et nous allons au parc ."):
// each clause translates as it does alone, so the task stays learnable at any length, while the
// source grows to 30 tokens. Imperatives are left out (French ends them with "!").

import { uniform } from '../random.js';
import { SENTENCE_KINDS } from './fra-eng-sentences.js';

const CLAUSE_KINDS = SENTENCE_KINDS.filter(([kind]) => kind.name !== 'imperative');
const TOTAL = CLAUSE_KINDS.reduce((sum, [, w]) => sum + w, 0);
const stripEnd = (text) => text.replace(/ [.!]$/, '');

function clausePair(rand) {
  let r = rand() * TOTAL;
  const [kind] = CLAUSE_KINDS.find(([, w]) => (r -= w) < 0) ?? CLAUSE_KINDS[CLAUSE_KINDS.length - 1];
  return kind(rand);
}

/**
 * `size` distinct pairs [{ src, tgt }] of 1 to `maxClauses` clauses joined by "and" / "et", from
 * `seed`; clause counts are drawn uniformly, so long sentences are as common as short ones.
 */
export function generateFraEngLong({ seed = 0, size = 3000, maxClauses = 4 } = {}) {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`size: expected a positive integer, given ${size}`);
  const rand = uniform(seed);
  const pairs = [];
  const seen = new Set();
  for (let attempts = 0; pairs.length < size; attempts++) {
    if (attempts > 100 * size) throw new RangeError(`size: expected at most what the grammar yields, given ${size}`);
    const clauses = Array.from({ length: 1 + Math.floor(rand() * maxClauses) }, () => clausePair(rand));
    const src = `${clauses.map((c) => stripEnd(c.src)).join(' and ')} .`;
    if (seen.has(src)) continue;
    seen.add(src);
    pairs.push({ src, tgt: `${clauses.map((c) => stripEnd(c.tgt)).join(' et ')} .` });
  }
  return pairs;
}
