// The held-out split. A pair goes to the held-out set when a hash of its *target* falls in the
// held-out fraction, so
// - it is deterministic and stable: a pair's side depends on its text only, not on the seed,
//   the corpus size or the order (a bigger corpus adds pairs without moving any);
// - nothing leaks: pairs with one target ("he is calm ." and "he's calm .", or one date in
//   two formats) land on the same side, so no source and no target is in both sets.
// The fraction is met in expectation, not exactly (the report gives the counts).

import { hashString } from '../random.js';

const BUCKETS = 10000;

/**
 * pairs [{ src, tgt, ... }] -> { train, heldOut } (each in the input order). Pairs whose
 * target is in `keepInTrain` (e.g. the probe sentences the page shows) always go to train.
 */
export function splitPairs(pairs, { heldOutFraction = 0.1, keepInTrain = [] } = {}) {
  if (!(heldOutFraction >= 0 && heldOutFraction <= 1)) {
    throw new RangeError(`heldOutFraction: expected a number in [0, 1], given ${heldOutFraction}`);
  }
  const keep = new Set(keepInTrain);
  const train = [];
  const heldOut = [];
  for (const pair of pairs) {
    const held = !keep.has(pair.tgt) && hashString(pair.tgt) % BUCKETS < heldOutFraction * BUCKETS;
    (held ? heldOut : train).push(pair);
  }
  return { train, heldOut };
}
