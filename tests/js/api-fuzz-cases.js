// The calls the API fuzzer makes: one builder per public function, each drawing random valid
// arguments (sizes 0, 1, small, and around the fused kernel's 16-wide tiles, 64-query blocks and
// the 128-key blocks it takes under a sliding window) and returning a case:
//   { label, args, run(attn, args), check(attn, result), slots, mismatches }
// `check` asserts the result against the double-precision reference (harness/reference.js) for the
// original args; `slots` are the arguments the fuzzer may replace, each { name, path, value,
// hostile?, invalid(rng) -> { value, blame, kind, form } }; `mismatches` are tensors of a shape
// that cannot fit the others ({ path, shape }), which any argument's name may be blamed for.

import assert from 'node:assert/strict';

import { dot, dropoutFactors, numericGradient, toDouble } from './gradient-check.js';
import { invalidForm } from './hostile.js';
import * as ref from '../../harness/reference.js';

const { assertClose, randomTensor, tensor, LOOSE, TIGHT } = ref;

const BLOCK_EDGES = [15, 16, 17, 63, 64, 65, 127, 128, 129];

/** Random choices from one generator. */
export function chooser(rng) {
  const int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
  const pick = (list) => list[Math.floor(rng() * list.length)];
  const chance = (p) => rng() < p;
  // A size: mostly 0 to 5; with `edges`, sometimes a block edge of the fused kernel.
  const size = (edges = false) => (edges && chance(0.2) ? pick(BLOCK_EDGES) : pick([0, 1, 1, 2, 3, 4, 5]));
  return { rng, int, pick, chance, size };
}

// ---- slots ---------------------------------------------------------------------------------

const tensorSlot = (name, path, value) => ({ name, path, value, hostile: true, invalid: (rng) => invalidForm(rng, name, value) });

/** A scalar argument or option; `bads` lists [value, error kind] pairs it must refuse. */
const valueSlot = (name, path, value, bads) => ({
  name, path, value,
  invalid: (rng) => {
    const [bad, kind] = bads[Math.floor(rng() * bads.length)];
    return { value: bad, blame: name, kind, form: `${name} = ${typeof bad === 'bigint' ? `${bad}n` : String(bad)}` };
  },
});

const NOT_OPTIONS = [[5, TypeError], ['options', TypeError], [true, TypeError], [null, TypeError]];
const optionsSlot = (name, path, value) => valueSlot(name, path, value, NOT_OPTIONS);
// (null is not among them: the mask options read null as absent, as validLens and mask do.)
const booleanSlot = (name, path, value) => valueSlot(name, path, value, [[1, TypeError], ['true', TypeError], [{}, TypeError]]);
const FLOAT32_BADS = [[1e39, RangeError], [-1e-50, RangeError], ['1', TypeError], [1n, TypeError]];
const SEED_BADS = [[-1, RangeError], [0.5, RangeError], [NaN, RangeError], [2 ** 53, RangeError], ['1', TypeError]];
const FILL_BADS = [[NaN, RangeError], [Infinity, RangeError], [-1e39, RangeError], [1e39, RangeError], ['-1e6', TypeError]];
const SIZE_BADS = [[-1, RangeError], [1.5, RangeError], [NaN, RangeError], [Infinity, RangeError], ['3', TypeError], [3n, TypeError]];

/** Lengths that cannot be valid for [batch] or [batch, nq] lengths into nk keys. */
function lengthsBads(batch, nq, nk) {
  let count = batch * nq + 1;
  while (count === batch || count === batch * nq) count++;
  const list = (value) => Array.from({ length: batch }, (_, i) => (i === 0 ? value : 0));
  const bads = [[new Int32Array(count), RangeError], [new Float32Array(batch), TypeError], [3, TypeError], ['1', TypeError]];
  if (batch === 0) return bads; // no length to get wrong
  return [
    ...bads, [list(nk + 1), RangeError], [list(-1), RangeError], [list(0.5), RangeError], [list(NaN), RangeError],
    [list('1'), TypeError], [list(null), TypeError], [Int32Array.from(list(nk + 1)), RangeError],
  ];
}

/** Masks that fit neither [nq, nk] nor [matrices, nq, nk]. */
function maskBads(matrices, nq, nk, types = [Uint8Array, Float32Array]) {
  let count = nq * nk + 1;
  while (count === matrices * nq * nk) count++;
  return [
    ...types.map((Type) => [new Type(count), RangeError]),
    ...types.map((Type) => [tensor(new Type(nq * (nk + 1)), [nq, nk + 1], Type), RangeError]),
    [new Int32Array(nq * nk), TypeError], ['mask', TypeError],
  ];
}

// ---- random options --------------------------------------------------------------------------

/** validLens in one of its forms: Int32Array [B], number[] [B * nq], tensor [B, nq]. */
function randomLengths(c, batch, nq, nk) {
  const perQuery = c.chance(0.5);
  const values = Array.from({ length: perQuery ? batch * nq : batch }, () => (c.chance(0.15) ? c.pick([0, nk]) : c.int(0, nk)));
  if (!perQuery) return c.chance(0.5) ? Int32Array.from(values) : values;
  return c.pick([values, Int32Array.from(values), tensor(values, [batch, nq], Int32Array)]);
}

/** A boolean or additive mask of [nq, nk] or [matrices, nq, nk], bare or as a tensor. */
function randomMask(c, matrices, nq, nk) {
  const shape = c.chance(0.5) ? [nq, nk] : [matrices, nq, nk];
  const count = ref.sizeOf(shape);
  const data = c.chance(0.5)
    ? ref.randomBits(c.rng, count, c.pick([0.1, 0.3, 0.9]))
    : Float32Array.from({ length: count }, () => (c.chance(0.05) ? -Infinity : 4 * c.rng() - 2));
  return c.chance(0.5) ? data : tensor(data, shape, data.constructor);
}

const randomFill = (c) => c.pick([undefined, -1e6, -Infinity, -1e4, -3.4e38, 0, 2.5]);

// The options of both attention functions: the mask and the scalars, each present or not.
function attentionOptions(c, { batch, nq, nk, scale = true }) {
  const options = {};
  if (c.chance(0.35)) options.validLens = randomLengths(c, batch, nq, nk);
  if (c.chance(0.25)) options.mask = randomMask(c, batch, nq, nk);
  if (c.chance(0.2)) options.causal = c.chance(0.8);
  if (scale && c.chance(0.25)) options.scale = c.pick([0, 0.25, 1, 2.5, -0.5]);
  if (c.chance(0.3)) options.fill = randomFill(c);
  if (c.chance(0.15)) {
    options.dropout = c.pick([0, 0.1, 0.5, 0.9]);
    options.seed = c.int(0, 2 ** 40);
  }
  if (c.chance(0.5)) options.weights = c.chance(0.7);
  return options;
}

function attentionOptionSlots(o, at, { batch, nq, nk, scale = true }) {
  return [
    optionsSlot('options', [at], o),
    valueSlot('validLens', [at, 'validLens'], o.validLens, lengthsBads(batch, nq, nk)),
    valueSlot('mask', [at, 'mask'], o.mask, maskBads(batch, nq, nk)),
    booleanSlot('causal', [at, 'causal'], o.causal),
    ...(scale ? [valueSlot('scale', [at, 'scale'], o.scale, [...FLOAT32_BADS, [NaN, RangeError], [Infinity, RangeError]])] : []),
    valueSlot('fill', [at, 'fill'], o.fill, FILL_BADS),
    valueSlot('dropout', [at, 'dropout'], o.dropout, [[1, RangeError], [-0.25, RangeError], [NaN, RangeError], ['0.5', TypeError]]),
    valueSlot('seed', [at, 'seed'], o.seed, SEED_BADS),
    booleanSlot('weights', [at, 'weights'], o.weights),
  ];
}

// The mask slots that hold a typed array or tensor get the hostile forms too.
function hostileMaskSlots(o, at, names) {
  return names.filter((name) => o[name] != null && typeof o[name] === 'object' && !Array.isArray(o[name]))
    .map((name) => ({ ...tensorSlot(name, [at, name], o[name]), hostileOnly: true }));
}

// ---- checks ----------------------------------------------------------------------------------

/** The contract's tolerance for sums of `terms` terms; LOOSE past 32 (see harness/reference.js). */
const tolerance = (terms) => (terms > 32 ? LOOSE : TIGHT);

// (P * F) v in double for weights P [M, nq, nk] and dropout factors F.
const droppedOutput = (weights, factors, v) => ref.bmm({ data: weights.data.map((p, i) => p * factors[i]), shape: weights.shape }, v);

/**
 * Checks an attention result against the reference weights and output; with dropout, the
 * output against the reference weights times the factors this build applied (each 0 or
 * 1 / (1 - p)), read back with v = identity.
 */
function checkAttention(attn, got, want, { q, k, v, options, fn }) {
  const { weights = false, dropout = 0 } = options;
  assert.deepEqual(Object.keys(got).sort(), weights ? ['output', 'weights'] : ['output']);
  const nk = k.shape[1];
  // Sums over the keys and, in each score, over the width.
  const terms = Math.max(nk, q.shape[2]);
  if (weights) assertClose(got.weights, want.weights, { ...tolerance(q.shape[2]), label: 'weights' });
  if (!(dropout > 0)) {
    assertClose(got.output, want.output, { ...tolerance(terms), label: 'output' });
    return;
  }
  const factors = dropoutFactors(attn, q, k, options, fn);
  const kept = 1 / (1 - Math.fround(dropout));
  factors.forEach((f, i) => {
    if (Number.isNaN(f) || want.weights.data[i] < 1e-30) return;
    assert.ok(Math.abs(f) < 1e-5 || Math.abs(f - kept) < 1e-3 * kept, `dropout factor ${f} at ${i}, expected 0 or ${kept}`);
  });
  assertClose(got.output, droppedOutput(want.weights, factors, v), { ...tolerance(terms), label: 'output with dropout' });
}

/** Entries of a gradient compared at some indices with central differences of `loss`. */
function checkGradientAt(c, got, x, loss, label) {
  assert.deepEqual(got.shape, x.shape, `${label}: shape`);
  const count = x.data.length;
  const indices = [...new Set(Array.from({ length: Math.min(count, 6) }, () => c.int(0, count - 1)))];
  const want = numericGradient(x, loss, 1e-6, indices);
  const largest = got.data.reduce((m, g) => Math.max(m, Math.abs(g)), 0);
  for (const i of indices) {
    const error = Math.abs(got.data[i] - want.data[i]);
    assert.ok(error <= 2e-4 * Math.max(largest, Math.abs(want.data[i])) + 1e-6,
      `${label}[${i}]: got ${got.data[i]}, finite differences ${want.data[i]} (largest |entry| ${largest})`);
  }
}

const allFinite = (t) => t.data.every(Number.isFinite);

// ---- the builders ------------------------------------------------------------------------------

function softmaxCase(c) {
  const rank = c.int(1, 3);
  const shape = Array.from({ length: rank }, (_, axis) => c.size(axis === rank - 1));
  const x = randomTensor(c.rng, shape, -5, 5);
  if (x.data.length && c.chance(0.1)) x.data[c.int(0, x.data.length - 1)] = NaN;
  return {
    label: `softmax [${shape}]`,
    args: [x],
    run: (attn, [a]) => attn.softmax(a),
    check: (attn, got) => assertClose(got, ref.softmax(x), { label: 'softmax' }),
    slots: [tensorSlot('x', [0], x)],
    mismatches: [],
  };
}

function maskedSoftmaxCase(c) {
  const [batch, nq, nk] = [c.size(), c.size(true), c.size(true)];
  const x = randomTensor(c.rng, [batch, nq, nk], -5, 5);
  const lens = c.chance(0.8) ? randomLengths(c, batch, nq, nk) : c.pick([null, undefined]);
  const fill = randomFill(c);
  const options = fill === undefined && c.chance(0.5) ? undefined : { fill };
  return {
    label: `maskedSoftmax [${x.shape}]`,
    args: [x, lens, options],
    run: (attn, [a, l, o]) => attn.maskedSoftmax(a, l, o),
    check: (attn, got) => assertClose(got, ref.maskedSoftmax(x, lens, options), { label: 'maskedSoftmax' }),
    slots: [
      tensorSlot('x', [0], x),
      valueSlot('validLens', [1], lens, lengthsBads(batch, nq, nk)),
      optionsSlot('options', [2], options),
      ...(options ? [valueSlot('fill', [2, 'fill'], fill, FILL_BADS)] : []),
      ...(lens && !Array.isArray(lens) ? [{ ...tensorSlot('validLens', [1], lens), hostileOnly: true }] : []),
    ],
    mismatches: [],
  };
}

function scoreParams(c, fn, dq, dk) {
  if (fn === 'additive') {
    const h = c.pick([0, 1, 2, 3, 5]);
    return { Wq: randomTensor(c.rng, [h, dq]), Wk: randomTensor(c.rng, [h, dk]), wv: randomTensor(c.rng, [h]) };
  }
  if (fn === 'general') return { W: randomTensor(c.rng, [dq, dk]) };
  return {};
}

function scoreCase(c) {
  const fn = c.pick(['dot', 'scaled-dot', 'neg-sq-dist', 'additive', 'general', undefined]);
  const [batch, nq, nk, dq] = [c.size(), c.size(true), c.size(true), c.pick([0, 1, 2, 3, 4, 8])];
  const dk = fn === 'additive' || fn === 'general' ? c.pick([0, 1, 3, 5]) : dq;
  const q = randomTensor(c.rng, [batch, nq, dq]);
  const k = randomTensor(c.rng, [batch, nk, dk]);
  const params = scoreParams(c, fn, dq, dk);
  const options = fn === undefined && c.chance(0.5) ? undefined : { fn, ...params };
  const wrongK = fn === 'additive' || fn === 'general' ? [batch, nk, dk + 1] : [batch, nk, dq + 1];
  return {
    label: `score ${fn} q [${q.shape}] k [${k.shape}]`,
    args: [q, k, options],
    run: (attn, [a, b, o]) => attn.score(a, b, o),
    check: (attn, got) => assertClose(got, ref.score(q, k, options), { ...tolerance(Math.max(dq, params.wv?.data.length ?? 0)), label: 'scores' }),
    slots: [
      tensorSlot('q', [0], q),
      tensorSlot('k', [1], k),
      optionsSlot('options', [2], options),
      ...(options ? [valueSlot('fn', [2, 'fn'], fn, [['softmax', RangeError], ['DOT', RangeError], [3, TypeError]])] : []),
      ...Object.entries(params).map(([name, t]) => tensorSlot(name, [2, name], t)),
    ],
    mismatches: [{ path: [1], shape: wrongK }, { path: [1], shape: [batch + 1, nk, dk] }],
  };
}

function bmmCase(c) {
  const [batch, n, inner, m] = [c.size(), c.size(true), c.size(true), c.size(true)];
  const a = randomTensor(c.rng, [batch, n, inner]);
  const b = randomTensor(c.rng, [batch, inner, m]);
  return {
    label: `bmm [${a.shape}] x [${b.shape}]`,
    args: [a, b],
    run: (attn, [x, y]) => attn.bmm(x, y),
    check: (attn, got) => assertClose(got, ref.bmm(a, b), { ...tolerance(inner), label: 'bmm' }),
    slots: [tensorSlot('a', [0], a), tensorSlot('b', [1], b)],
    mismatches: [{ path: [1], shape: [batch, inner + 1, m] }, { path: [1], shape: [batch + 1, inner, m] }],
  };
}

// NaN in q (forward only): a masked score is replaced, so only unmasked rows turn NaN. A
// backward's NaN is left out: whether 0 * NaN reaches a gradient is the kernel's order of work.
function attentionInputs(c, { additive = false, nan = false } = {}) {
  const batch = c.pick([0, 1, 1, 2, 3]);
  const nq = c.size(true);
  const nk = c.size(true);
  const dq = c.pick([0, 1, 2, 3, 4, 8, 17, 64]);
  const dk = additive ? c.pick([0, 1, 2, 5]) : dq;
  const dv = c.pick([0, 1, 2, 3, 5]);
  const [q, k, v] = [[batch, nq, dq], [batch, nk, dk], [batch, nk, dv]].map((shape) => randomTensor(c.rng, shape));
  if (nan && q.data.length && c.chance(0.05)) q.data[c.int(0, q.data.length - 1)] = NaN;
  return { batch, nq, nk, dq, dk, dv, q, k, v };
}

const inputSlots = ({ q, k, v }) => [tensorSlot('q', [0], q), tensorSlot('k', [1], k), tensorSlot('v', [2], v)];
const inputMismatches = ({ batch, nk, dk, dv }) => [
  { path: [1], shape: [batch, nk, dk + 1] }, { path: [2], shape: [batch, nk + 1, dv] }, { path: [2], shape: [batch + 1, nk, dv] },
];

function additiveParams(c, { dq, dk }) {
  const h = c.pick([0, 1, 2, 3, 5]);
  return { Wq: randomTensor(c.rng, [h, dq]), Wk: randomTensor(c.rng, [h, dk]), wv: randomTensor(c.rng, [h]) };
}

function sdpaCase(c) {
  const inputs = attentionInputs(c, { nan: true });
  const { q, k, v } = inputs;
  const options = attentionOptions(c, inputs);
  const passed = c.chance(0.1) && Object.keys(options).length === 0 ? undefined : options;
  return {
    label: `scaledDotProductAttention q [${q.shape}] k [${k.shape}] v [${v.shape}]`,
    args: [q, k, v, passed],
    run: (attn, [a, b, d, o]) => attn.scaledDotProductAttention(a, b, d, o),
    check: (attn, got) => checkAttention(attn, got, ref.scaledDotProductAttention(q, k, v, options), { q, k, v, options, fn: 'scaledDotProductAttention' }),
    slots: [...inputSlots(inputs), ...attentionOptionSlots(options, 3, inputs), ...hostileMaskSlots(options, 3, ['validLens', 'mask'])],
    mismatches: inputMismatches(inputs),
  };
}

function additiveCase(c) {
  const inputs = attentionInputs(c, { additive: true, nan: true });
  const { q, k, v } = inputs;
  const params = additiveParams(c, inputs);
  // Additive attention takes no scale (the core ignores it): none is passed.
  const options = { ...attentionOptions(c, { ...inputs, scale: false }), ...params };
  return {
    label: `additiveAttention q [${q.shape}] k [${k.shape}] v [${v.shape}] h ${params.wv.shape[0]}`,
    args: [q, k, v, options],
    run: (attn, [a, b, d, o]) => attn.additiveAttention(a, b, d, o),
    check: (attn, got) => checkAttention(attn, got, ref.additiveAttention(q, k, v, options), { q, k, v, options, fn: 'additiveAttention' }),
    slots: [
      ...inputSlots(inputs), ...attentionOptionSlots(options, 3, { ...inputs, scale: false }),
      ...hostileMaskSlots(options, 3, ['validLens', 'mask']),
      ...Object.entries(params).map(([name, t]) => tensorSlot(name, [3, name], t)),
    ],
    mismatches: inputMismatches(inputs),
  };
}

function sdpaBackwardCase(c) {
  const inputs = attentionInputs(c);
  const { batch, nq, dv, q, k, v } = inputs;
  const options = attentionOptions(c, inputs);
  delete options.weights;
  const gradOutput = randomTensor(c.rng, [batch, nq, dv]);
  return {
    label: `scaledDotProductAttentionBackward q [${q.shape}] k [${k.shape}] v [${v.shape}]`,
    args: [q, k, v, gradOutput, options],
    run: (attn, [a, b, d, g, o]) => attn.scaledDotProductAttentionBackward(a, b, d, g, o),
    check: (attn, got) => {
      assert.deepEqual(Object.keys(got).sort(), ['dk', 'dq', 'dv']);
      const factors = options.dropout > 0 ? dropoutFactors(attn, q, k, options) : null;
      const want = ref.scaledDotProductAttentionBackward(q, k, v, gradOutput, options, factors);
      for (const name of ['dq', 'dk', 'dv']) {
        // The gradients issue's rule: within 2e-4 of the largest entry.
        const largest = want[name].data.reduce((m, x) => (Number.isFinite(x) ? Math.max(m, Math.abs(x)) : m), 0);
        assertClose(got[name], want[name], { atol: 2e-4 * largest + 1e-6, rtol: 0, label: name });
      }
    },
    slots: [...inputSlots(inputs), tensorSlot('gradOutput', [3], gradOutput), ...attentionOptionSlots(options, 4, inputs).filter((s) => s.name !== 'weights'),
      ...hostileMaskSlots(options, 4, ['validLens', 'mask'])],
    mismatches: [...inputMismatches(inputs), { path: [3], shape: [batch, nq, dv + 1] }],
  };
}

function additiveBackwardCase(c) {
  // Small: the reference is central differences, two forwards per checked entry.
  const small = { ...c, size: () => c.pick([0, 1, 2, 3, 4]) };
  const inputs = attentionInputs(small, { additive: true });
  const { batch, nq, dv, q, k, v } = inputs;
  const params = additiveParams(c, inputs);
  const options = { ...attentionOptions(small, { ...inputs, scale: false }), ...params };
  delete options.weights;
  delete options.dropout;
  delete options.seed;
  const gradOutput = randomTensor(c.rng, [batch, nq, dv]);
  return {
    label: `additiveAttentionBackward q [${q.shape}] k [${k.shape}] v [${v.shape}] h ${params.wv.shape[0]}`,
    args: [q, k, v, gradOutput, options],
    run: (attn, [a, b, d, g, o]) => attn.additiveAttentionBackward(a, b, d, g, o),
    check: (attn, got) => {
      assert.deepEqual(Object.keys(got).sort(), ['dWk', 'dWq', 'dk', 'dq', 'dv', 'dwv']);
      const [qd, kd, vd, gd] = [q, k, v, gradOutput].map(toDouble);
      const pd = Object.fromEntries(Object.entries(params).map(([name, t]) => [name, toDouble(t)]));
      const loss = () => dot(ref.additiveAttention(qd, kd, vd, { ...options, ...pd }).output, gd);
      // A row no key reaches (an additive -Infinity, or PyTorch's fill) has NaN weights, which
      // the chain rule carries into the gradients even where the output is empty: shapes only.
      if (!allFinite(ref.additiveAttention(q, k, v, options).weights)) {
        return [got.dq, got.dk, got.dv].forEach((t, i) => assert.deepEqual(t.shape, [q, k, v][i].shape));
      }
      for (const [name, x] of [['dq', qd], ['dk', kd], ['dv', vd], ['dWq', pd.Wq], ['dWk', pd.Wk], ['dwv', pd.wv]]) {
        checkGradientAt(c, got[name], x, loss, name);
      }
    },
    slots: [...inputSlots(inputs), tensorSlot('gradOutput', [3], gradOutput),
      ...attentionOptionSlots(options, 4, { ...inputs, scale: false }).filter((s) => !['weights', 'dropout', 'seed'].includes(s.name)),
      ...Object.entries(params).map(([name, t]) => tensorSlot(name, [4, name], t))],
    mismatches: [...inputMismatches(inputs), { path: [3], shape: [batch, nq + 1, dv] }],
  };
}

const KERNEL_NAMES = ['gaussian', 'boxcar', 'epanechnikov', 'constant'];

function kernelInputs(c, rows) {
  const dx = c.pick([1, 1, 2, 3]);
  const dy = c.pick([1, 1, 2]);
  const matrix = (n, d, lo, hi) => {
    const t = randomTensor(c.rng, [n, d], lo, hi);
    return d === 1 && c.chance(0.5) ? tensor(t.data, [n]) : t;
  };
  return { dx, dy, matrix, keys: matrix(rows, dx, 0, 5) };
}

// Which query rows the contract's tolerance applies to. An Epanechnikov row whose keys all lie
// near the kernel's edge has a small total weight, each weight 1 - d / sigma carrying float32's
// rounding of d / sigma (~1e-7), so its normalised weights are ill-conditioned; rows with a
// total below 0.1 are left out (a total of 0, no key in reach, stays checked: NaN).
function wellConditionedRows(kernel, keys, queries, bandwidth) {
  const [k, q] = [keys, queries].map((t) => (t.shape.length === 1 ? { data: t.data, shape: [t.shape[0], 1] } : t));
  const [n, dx] = k.shape;
  return Array.from({ length: q.shape[0] }, (_, i) => {
    if (kernel !== 'epanechnikov') return true;
    let total = 0;
    for (let j = 0; j < n; j++) {
      let sq = 0;
      for (let t = 0; t < dx; t++) sq += (q.data[i * dx + t] - k.data[j * dx + t]) ** 2;
      total += Math.max(0, 1 - Math.sqrt(sq) / bandwidth);
    }
    return total === 0 || total >= 0.1;
  });
}

function kernelRegressionCase(c) {
  const n = c.size(true);
  const m = c.size(true);
  const { dx, dy, matrix, keys } = kernelInputs(c, n);
  const values = matrix(n, dy, -2, 2);
  const queries = matrix(m, dx, -1, 6);
  const kernel = c.pick([...KERNEL_NAMES, undefined]);
  const bandwidth = c.pick([undefined, 0.05, 0.3, 1, 3]);
  const weights = c.pick([undefined, true, false]);
  const args = { keys, values, queries, kernel, bandwidth, weights };
  return {
    label: `kernelRegression ${kernel} σ ${bandwidth} keys [${keys.shape}] queries [${queries.shape}]`,
    args: [args],
    run: (attn, [a]) => attn.kernelRegression(a),
    check: (attn, got) => {
      const want = ref.kernelRegression({ keys, values, queries, kernel, bandwidth });
      assert.deepEqual(Object.keys(got).sort(), weights ? ['output', 'weights'] : ['output']);
      const rows = wellConditionedRows(kernel, keys, queries, bandwidth ?? 1);
      const pick = (t) => ({ data: t.data.filter((_, i) => rows[Math.floor(i / (t.data.length / m))]), shape: [t.data.length] });
      assertClose(pick(got.output).data, pick(want.output).data, { ...tolerance(n), label: 'output' });
      if (weights) assertClose(pick(got.weights).data, pick(want.weights).data, { label: 'weights' });
    },
    slots: [
      optionsSlot('kernelRegression', [0], args),
      tensorSlot('keys', [0, 'keys'], keys), tensorSlot('values', [0, 'values'], values), tensorSlot('queries', [0, 'queries'], queries),
      valueSlot('kernel', [0, 'kernel'], kernel, [['triangle', RangeError], ['Gaussian', RangeError], [0, TypeError]]),
      valueSlot('bandwidth', [0, 'bandwidth'], bandwidth, [[0, RangeError], [-1, RangeError], [NaN, RangeError], [Infinity, RangeError], ...FLOAT32_BADS]),
      booleanSlot('weights', [0, 'weights'], weights),
    ],
    mismatches: [{ path: [0, 'values'], shape: [n + 1, dy] }, { path: [0, 'queries'], shape: [m, dx + 1] }],
  };
}

function kernelValuesCase(c) {
  const shape = Array.from({ length: c.int(1, 2) }, () => c.size(true));
  const distances = randomTensor(c.rng, shape, 0, 4);
  const kernel = c.pick([...KERNEL_NAMES, undefined]);
  const bandwidth = c.pick([undefined, 0.05, 0.3, 1, 3]);
  const args = { distances, kernel, bandwidth };
  return {
    label: `kernelValues ${kernel} σ ${bandwidth} [${shape}]`,
    args: [args],
    run: (attn, [a]) => attn.kernelValues(a),
    check: (attn, got) => assertClose(got, ref.kernelValues({ distances, kernel, bandwidth }), { label: 'kernelValues' }),
    slots: [
      optionsSlot('kernelValues', [0], args),
      tensorSlot('distances', [0, 'distances'], distances),
      valueSlot('kernel', [0, 'kernel'], kernel, [['triangle', RangeError], ['Gaussian', RangeError], [0, TypeError]]),
      valueSlot('bandwidth', [0, 'bandwidth'], bandwidth, [[0, RangeError], [-1, RangeError], [NaN, RangeError], [Infinity, RangeError], ...FLOAT32_BADS]),
    ],
    mismatches: [],
  };
}

function leaveOneOutCase(c) {
  const n = c.pick([0, 1, 2, 3, 5, 8, 17]);
  const { dy, matrix, keys } = kernelInputs(c, n);
  const values = matrix(n, dy, -2, 2);
  const kernel = c.pick([...KERNEL_NAMES, undefined]);
  const list = Array.from({ length: c.int(1, 4) }, () => c.pick([0.05, 0.2, 0.5, 1, 2, 5]));
  const bandwidths = c.chance(0.5) ? list : Float32Array.from(list);
  const args = { keys, values, kernel, bandwidths };
  return {
    label: `leaveOneOut ${kernel} n ${n} bandwidths [${list}]`,
    args: [args],
    run: (attn, [a]) => attn.leaveOneOut(a),
    check: (attn, got) => {
      const want = ref.leaveOneOut({ keys, values, kernel, bandwidths: Float32Array.from(list) });
      assert.ok(got.errors instanceof Float32Array);
      assertClose(got.errors, want.errors, { ...LOOSE, label: 'errors' });
      // The best bandwidth: one whose reference error ties the smallest (float32 may break a tie).
      if (Number.isNaN(want.best)) return assert.ok(Number.isNaN(got.best), `best ${got.best}, expected NaN`);
      const smallest = Math.min(...want.errors);
      const ties = list.filter((b, i) => want.errors[i] <= smallest + LOOSE.atol + LOOSE.rtol * smallest).map(Math.fround);
      assert.ok(ties.includes(got.best), `best ${got.best}, expected one of ${ties}`);
    },
    slots: [
      optionsSlot('leaveOneOut', [0], args),
      tensorSlot('keys', [0, 'keys'], keys), tensorSlot('values', [0, 'values'], values),
      valueSlot('kernel', [0, 'kernel'], kernel, [['gauss', RangeError], [null, TypeError]]),
      valueSlot('bandwidths', [0, 'bandwidths'], bandwidths, [[[], TypeError], [[1, 0], RangeError], [[NaN], RangeError], [['1'], TypeError], [2, TypeError], [new Float64Array(2), TypeError]]),
    ],
    mismatches: [{ path: [0, 'values'], shape: [n + 1, dy] }],
  };
}

function positionalEncodingCase(c) {
  const n = c.size(true);
  const d = c.pick([0, 1, 2, 3, 6, 17]);
  return {
    label: `positionalEncoding(${n}, ${d})`,
    args: [n, d],
    run: (attn, [a, b]) => attn.positionalEncoding(a, b),
    check: (attn, got) => assertClose(got, ref.positionalEncoding(n, d), { label: 'encoding' }),
    slots: [valueSlot('n', [0], n, SIZE_BADS), valueSlot('d', [1], d, SIZE_BADS)],
    mismatches: [],
  };
}

// ---- MultiHeadAttention ---------------------------------------------------------------------------

function mhaSetup(c, { small = false } = {}) {
  const heads = c.pick([1, 1, 2, 3]);
  const embedDim = heads * c.pick(small ? [1, 2] : [1, 2, 3, 8]);
  const config = { embedDim, numHeads: heads };
  if (c.chance(0.3)) config.kdim = c.pick([1, 2, 4]);
  if (c.chance(0.3)) config.vdim = c.pick([1, 3]);
  if (c.chance(0.3)) config.bias = c.chance(0.5);
  const kdim = config.kdim ?? embedDim;
  const vdim = config.vdim ?? embedDim;
  const batch = c.pick([0, 1, 2]);
  const L = small ? c.int(0, 3) : c.size(true);
  const S = small ? c.int(0, 3) : c.size(true);
  const dict = ref.randomStateDict(c.rng, config);
  const query = randomTensor(c.rng, [batch, L, embedDim]);
  // Self-attention (forward(x)) and cross-attention (forward(x, memory)) where widths allow.
  const form = kdim === embedDim && vdim === embedDim && L === S && c.chance(0.3) ? 'self' : kdim === vdim && c.chance(0.3) ? 'cross' : 'full';
  const key = form === 'self' ? query : randomTensor(c.rng, [batch, S, kdim]);
  const value = form === 'full' ? randomTensor(c.rng, [batch, S, vdim]) : key;
  const options = {};
  const matrices = batch * heads;
  if (c.chance(0.3)) options.keyPaddingMask = c.pick([(bits) => bits, (bits) => tensor(bits, [batch, S], Uint8Array)])(ref.randomBits(c.rng, batch * S, 0.3));
  if (c.chance(0.3)) options.attnMask = randomMask(c, matrices, L, S);
  if (c.chance(0.15)) options.validLens = randomLengths(c, batch, L, S);
  if (c.chance(0.15)) options.causal = true;
  if (c.chance(0.3)) options.fill = c.pick([-1e6, -Infinity, -1e4]);
  const slots = [
    optionsSlot('config', [0], config),
    valueSlot('embedDim', [0, 'embedDim'], embedDim, [[0, RangeError], ...SIZE_BADS]),
    valueSlot('numHeads', [0, 'numHeads'], heads, [[0, RangeError], [embedDim + 1, RangeError], ...SIZE_BADS]),
    valueSlot('kdim', [0, 'kdim'], config.kdim, [[0, RangeError], ...SIZE_BADS]),
    valueSlot('vdim', [0, 'vdim'], config.vdim, [[0, RangeError], ...SIZE_BADS]),
    booleanSlot('bias', [0, 'bias'], config.bias),
    // A state dict with an entry of the wrong shape, a missing or an unknown entry.
    valueSlot('dict', [1], dict, [
      [{ ...dict, 'out_proj.weight': randomTensor(c.rng, [embedDim, embedDim + 1]) }, RangeError],
      [Object.fromEntries(Object.entries(dict).slice(1)), RangeError],
      [{ ...dict, extra: dict['out_proj.weight'] }, RangeError],
      [{ ...dict, 'out_proj.weight': { data: new Float64Array(embedDim * embedDim), shape: [embedDim, embedDim] } }, TypeError],
      ['dict', TypeError],
    ]),
    tensorSlot('query', [2], query),
    ...(form === 'self' ? [] : [tensorSlot('key', [3], key)]),
    ...(form === 'full' ? [tensorSlot('value', [4], value)] : []),
    optionsSlot('options', [5], options),
    valueSlot('keyPaddingMask', [5, 'keyPaddingMask'], options.keyPaddingMask, [[new Uint8Array(batch * S + 1), RangeError], [new Float32Array(batch * S), TypeError], [[0], TypeError]]),
    valueSlot('attnMask', [5, 'attnMask'], options.attnMask, maskBads(matrices, L, S)),
    valueSlot('validLens', [5, 'validLens'], options.validLens, lengthsBads(batch, L, S)),
    booleanSlot('causal', [5, 'causal'], options.causal),
    valueSlot('fill', [5, 'fill'], options.fill, FILL_BADS),
    ...hostileMaskSlots(options, 5, ['keyPaddingMask', 'attnMask', 'validLens']),
  ];
  const mismatches = [{ path: [2], shape: [batch, L, embedDim + 1] }];
  if (form === 'full') mismatches.push({ path: [3], shape: [batch, S, kdim + 1] }, { path: [4], shape: [batch, S + 1, vdim] });
  const args = [config, dict, query, form === 'self' ? undefined : key, form === 'full' ? value : undefined, options];
  return { config, dict, batch, L, S, embedDim, form, query, key, value, options, slots, mismatches, args };
}

// Creates, loads and disposes an instance around `body(mha)`, whatever happens.
function withInstance(attn, config, dict, body) {
  const mha = new attn.MultiHeadAttention(config);
  try {
    mha.loadStateDict(dict);
    return body(mha);
  } finally {
    mha.dispose();
  }
}

function mhaForwardCase(c) {
  const s = mhaSetup(c);
  const extra = {};
  if (c.chance(0.5)) extra.needWeights = c.chance(0.7);
  if (c.chance(0.5)) extra.averageAttnWeights = c.chance(0.5);
  Object.assign(s.options, extra);
  const { needWeights = true, averageAttnWeights = true } = s.options;
  return {
    label: `MultiHeadAttention ${JSON.stringify(s.config)} ${s.form} query [${s.query.shape}] key [${s.key.shape}]`,
    args: s.args,
    run: (attn, [config, dict, query, key, value, options]) => withInstance(attn, config, dict, (mha) => mha.forward(query, key, value, options)),
    check: (attn, got) => {
      const want = ref.multiHeadAttention(s.dict, s.config, s.query, s.key, s.value, s.options);
      assert.deepEqual(Object.keys(got).sort(), needWeights ? ['output', 'weights'] : ['output']);
      assertClose(got.output, want.output, { ...tolerance(s.S), label: 'output' });
      if (needWeights) {
        assert.deepEqual(got.weights.shape, averageAttnWeights ? [s.batch, s.L, s.S] : [s.batch, s.config.numHeads, s.L, s.S]);
        assertClose(got.weights, want.weights, { label: 'weights' });
      }
    },
    slots: [...s.slots, booleanSlot('needWeights', [5, 'needWeights'], extra.needWeights), booleanSlot('averageAttnWeights', [5, 'averageAttnWeights'], extra.averageAttnWeights)],
    mismatches: s.mismatches,
  };
}

function mhaBackwardCase(c) {
  const s = mhaSetup(c, { small: true });
  const gradOutput = randomTensor(c.rng, [s.batch, s.L, s.embedDim]);
  const args = [...s.args.slice(0, 3), s.key, s.value, gradOutput, s.options];
  return {
    label: `MultiHeadAttention.backward ${JSON.stringify(s.config)} query [${s.query.shape}] key [${s.key.shape}]`,
    args,
    run: (attn, [config, dict, query, key, value, g, options]) => withInstance(attn, config, dict, (mha) => {
      const gradients = mha.backward(query, key, value, g, options);
      // stateDict gives back what was loaded.
      const state = mha.stateDict();
      return { gradients, state };
    }),
    check: (attn, { gradients: got, state }) => {
      assert.deepEqual(Object.keys(state), Object.keys(s.dict));
      for (const [name, t] of Object.entries(s.dict)) assert.deepEqual(state[name], { data: t.data, shape: t.shape }, `stateDict ${name}`);
      assert.deepEqual(Object.keys(got).sort(), ['dKey', 'dParameters', 'dQuery', 'dValue']);
      const [qd, kd, vd, gd] = [s.query, s.key, s.value, gradOutput].map(toDouble);
      const dd = Object.fromEntries(Object.entries(s.dict).map(([name, t]) => [name, toDouble(t)]));
      // The same tensor passed twice is two inputs here; each gets its own gradient.
      const loss = () => dot(ref.multiHeadAttention(dd, s.config, qd, kd, vd, s.options).output, gd);
      if (!allFinite(ref.multiHeadAttention(s.dict, s.config, s.query, s.key, s.value, { ...s.options, averageAttnWeights: false }).weights)) {
        // A query that sees no key (PyTorch's -Infinity fill): NaN; only the shapes are checked.
        assert.deepEqual([got.dQuery.shape, got.dKey.shape, got.dValue.shape], [s.query.shape, s.key.shape, s.value.shape]);
        return;
      }
      for (const [name, x] of [['dQuery', qd], ['dKey', kd], ['dValue', vd]]) checkGradientAt(c, got[name], x, loss, name);
      assert.deepEqual(Object.keys(got.dParameters), Object.keys(s.dict));
      for (const [name, x] of Object.entries(dd)) checkGradientAt(c, got.dParameters[name], x, loss, name);
      for (const t of Object.values(got.dParameters)) assert.ok(allFinite(t));
    },
    slots: [...s.slots.filter((slot) => !['key', 'value', 'options', 'keyPaddingMask', 'attnMask', 'validLens', 'causal', 'fill'].includes(slot.name) && slot.path[0] < 5),
      tensorSlot('key', [3], s.key), tensorSlot('value', [4], s.value), tensorSlot('gradOutput', [5], gradOutput),
      ...s.slots.filter((slot) => slot.path[0] === 5).map((slot) => ({ ...slot, path: [6, ...slot.path.slice(1)] }))],
    mismatches: [...s.mismatches, { path: [5], shape: [s.batch, s.L, s.embedDim + 1] }],
  };
}

/** The builders and how often each is drawn. */
export const BUILDERS = [
  [softmaxCase, 1], [maskedSoftmaxCase, 2], [scoreCase, 2], [bmmCase, 1], [sdpaCase, 5], [additiveCase, 2],
  [sdpaBackwardCase, 3], [additiveBackwardCase, 1], [kernelRegressionCase, 2], [kernelValuesCase, 1], [leaveOneOutCase, 1],
  [positionalEncodingCase, 1], [mhaForwardCase, 3], [mhaBackwardCase, 1],
];
