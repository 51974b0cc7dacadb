// A seeded generator of a small English -> French parallel corpus in d2l's fra-eng format
// (lowercase, punctuation separated by spaces, apostrophes inside tokens): it draws sentence
// templates (fra-eng-sentences.js) by weight and keeps the distinct ones. No download: the same
// seed gives the same pairs everywhere.

import { uniform } from '../random.js';
import { SENTENCE_KINDS } from './fra-eng-sentences.js';

/** d2l's four test sentences (sec_seq2seq_training): always in the corpus. */
export const D2L_EXAMPLES = [
  { src: 'go .', tgt: 'va !' },
  { src: 'i lost .', tgt: "j'ai perdu ." },
  { src: "he's calm .", tgt: 'il est calme .' },
  { src: "i'm home .", tgt: 'je suis chez moi .' },
];

/**
 * A probe for the alignment heatmap: French swaps "black cats" into "chats noirs". Its target
 * hashes into the held-out split (splitPairs with any heldOutFraction above 0.0933), so whatever
 * the seed it is never a training pair: the heatmap shows alignment on an unseen sentence.
 */
export const PROBE = { src: 'she likes the black cats .', tgt: 'elle aime les chats noirs .' };

/**
 * `size` distinct English -> French pairs [{ src, tgt }] from `seed`: d2l's four examples
 * first, then sentences drawn until `size` distinct sources are found.
 */
export function generateFraEng({ seed = 0, size = 4000 } = {}) {
  if (!Number.isInteger(size) || size < D2L_EXAMPLES.length) {
    throw new RangeError(`size: expected an integer >= ${D2L_EXAMPLES.length}, given ${size}`);
  }
  const rand = uniform(seed);
  const pairs = [...D2L_EXAMPLES];
  const seen = new Set(pairs.map((p) => p.src));
  const total = SENTENCE_KINDS.reduce((sum, [, w]) => sum + w, 0);
  for (let attempts = 0; pairs.length < size; attempts++) {
    if (attempts > 100 * size) throw new RangeError(`size: expected at most what the grammar yields, given ${size}`);
    let r = rand() * total;
    const [kind] = SENTENCE_KINDS.find(([, w]) => (r -= w) < 0) ?? SENTENCE_KINDS[SENTENCE_KINDS.length - 1];
    const pair = kind(rand);
    if (!seen.has(pair.src)) {
      seen.add(pair.src);
      pairs.push(pair);
    }
  }
  return pairs;
}
