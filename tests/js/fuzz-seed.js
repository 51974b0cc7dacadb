// The seed of the seeded fuzz and property tests: ATTN_FUZZ_SEED when set (to rerun a printed
// seed, or to explore new ones), else a fixed one, so that `npm test` draws the same cases on
// every run and a red CI run can be replayed exactly.
export const DEFAULT_FUZZ_SEED = 20261123;

export function fuzzSeed() {
  return Number(process.env.ATTN_FUZZ_SEED ?? DEFAULT_FUZZ_SEED);
}
