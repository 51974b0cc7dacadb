// Seeded randomness for the page's data (training points, random vectors, word embeddings):
// the same seed gives the same numbers in every browser, so a shared URL shows the same plots.
// This generates inputs only; every attention computation is the package's. The one seeded
// generator of the repository: the page, the benchmarks (scripts/bench) and the JS tests
// (harness/reference.js) draw their inputs from it.

/** mulberry32: a small, fast 32-bit generator; returns uniform numbers in [0, 1). */
export function uniform(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal numbers (Box-Muller) from a uniform generator. */
export function normal(rand) {
  let spare = null;
  return () => {
    if (spare !== null) {
      const z = spare;
      spare = null;
      return z;
    }
    const u = 1 - rand();
    const v = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/** A Float32Array of n numbers uniform in [-scale, scale) from `seed`. */
export function uniforms(n, seed, scale = 1) {
  const next = uniform(seed);
  return Float32Array.from({ length: n }, () => (next() * 2 - 1) * scale);
}

/** A Float32Array of n standard normal numbers from `seed`. */
export function normals(n, seed) {
  const z = normal(uniform(seed));
  return Float32Array.from({ length: n }, z);
}

/** FNV-1a hash of a string: a word's embedding seed. */
export function hashString(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
