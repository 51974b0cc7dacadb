// The inputs every attention runner gets and the checks its output must pass before it is timed:
// Q, K, V from the page's seeded generator (web/shared/random.js), and the double-precision
// reference the JS tests use (harness/reference.js). A disagreement (max abs diff > 1e-3) throws
// a PeerMismatchError, which stops the benchmark: a fast wrong answer must never be timed. Any
// other error means a runner cannot run here, and the sections skip it with a line.
import { scaledDotProductAttention } from '../../../harness/reference.js';
import { uniforms } from '../../../web/shared/random.js';

export const TOLERANCE = 1e-3;

export class PeerMismatchError extends Error {}

/** An error in one line, for the lines that say why a runner was skipped. */
export const oneLine = (e) => String(e?.message ?? e).split('\n')[0].slice(0, 200);

/** q, k, v of [1, n, d], uniform in [-1, 1) from seeds seed, seed + 1, seed + 2 (the page's generator). */
export function attentionTask(n, d, seed = 1) {
  const shape = [1, n, d];
  const [q, k, v] = [0, 1, 2].map((i) => ({ data: uniforms(n * d, seed + i), shape }));
  return { n, d, q, k, v };
}

// Rows `rows` of x [n, d] as a [1, rows.length, d] tensor: each output row of attention depends
// only on its own query, so the reference runs on those queries alone.
export const queryRows = (x, d, rows) => ({ data: Float32Array.from(rows.flatMap((i) => [...x.subarray(i * d, (i + 1) * d)])), shape: [1, rows.length, d] });

/** Rows `rows` of `out` (O = softmax(Q Kᵀ/√d) V for task t) against the float64 reference. */
export function checkRows(name, out, t, rows) {
  const { n, d } = t;
  if (!out || out.length !== n * d) {
    throw new PeerMismatchError(`${name}: output has ${out?.length} elements, expected ${n * d} (n = ${n}, d = ${d})`);
  }
  const ref = scaledDotProductAttention(queryRows(t.q.data, d, rows), t.k, t.v).output.data;
  let worst = 0, at = 0;
  rows.forEach((i, r) => {
    for (let c = 0; c < d; c++) {
      const diff = Math.abs(out[i * d + c] - ref[r * d + c]);
      if (!(diff <= worst)) { worst = diff; at = i * d + c; } // NaN counts as worst
    }
  });
  if (!(worst <= TOLERANCE)) {
    throw new PeerMismatchError(`${name}: output disagrees with the float64 reference at n = ${n}, d = ${d}: ` +
      `max abs diff ${worst} > ${TOLERANCE} (row ${Math.floor(at / d)}, column ${at % d})`);
  }
}

/** `runner` with its make() wrapped so that the first run at every size is checked on a few rows. */
export function checked(runner) {
  return {
    ...runner,
    make: async (t) => {
      const fn = await runner.make(t);
      const out = await fn();
      const rows = [...new Set([0, 1, t.n >> 1, t.n - 1])].filter((i) => i >= 0 && i < t.n);
      checkRows(runner.name, out, t, rows);
      return fn;
    },
  };
}

/** Throws a PeerMismatchError naming `what` unless `got` matches `want` element by element. */
export function expectClose(what, got, want) {
  if (!got || got.length !== want.length) {
    throw new PeerMismatchError(`${what}: output has ${got?.length} elements, expected ${want.length}`);
  }
  let worst = 0, at = 0;
  for (let i = 0; i < want.length; i++) {
    const diff = Math.abs(got[i] - want[i]);
    if (!(diff <= worst)) { worst = diff; at = i; } // NaN counts as worst
  }
  if (!(worst <= TOLERANCE)) {
    throw new PeerMismatchError(`${what}: max abs diff ${worst} > ${TOLERANCE} (element ${at}: ${got[at]} vs ${want[at]})`);
  }
  return worst;
}
