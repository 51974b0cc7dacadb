// The benchmark's timing helpers live in web/shared/timing.js, so the Node benchmark and the
// in-browser one measure the same way: one copy, re-exported here.
export { attentionFlops, measureInTurns, median } from '../../web/shared/timing.js';

// Multi-head self-attention on x [1, n, E]: four E x E projections (q, k, v, out) at 2·n·E² each,
// plus attention over all heads, 4·n²·(E/h)·h = 4·n²·E.
export const mhaFlops = (n, E) => 4 * 2 * n * E * E + 4 * n * n * E;
