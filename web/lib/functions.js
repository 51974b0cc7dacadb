// The stateless functions of the API, each: check the arguments, copy them into the wasm heap,
// call the core, copy the result out into fresh JS-owned arrays.

import { check, withHeap } from './heap.js';
import { prepareMask } from './mask.js';
import {
  checkAllocation, checkBoolean, checkChoice, checkNumber, checkSize, checkTensor, describe, tensor,
} from './tensor.js';

export const KERNELS = ['gaussian', 'boxcar', 'epanechnikov', 'constant'];
export const SCORE_FUNCTIONS = ['dot', 'scaled-dot', 'neg-sq-dist', 'additive', 'general'];

const arg = (data, shape) => {
  const [batch, rows, cols] = shape.length === 3 ? shape : [1, ...shape];
  return { data, batch, rows, cols };
};

// A [n, d] matrix, or a vector [n] read as [n, 1] (1-D kernel regression).
function asMatrix(name, value) {
  const shape = checkTensor(name, value, null);
  if (shape.length === 1) return { data: value.data, shape: [shape[0], 1] };
  if (shape.length !== 2) {
    throw new RangeError(`${name}: expected shape [n, d] or [n], got [${shape.join(', ')}]`);
  }
  return { data: value.data, shape };
}

function checkRank3(name, value, expected = [-1, -1, -1]) {
  return checkTensor(name, value, expected);
}

function checkAttentionOptions(options) {
  const { scale, dropout = 0, seed = 0, weights = false } = options;
  if (scale != null) checkNumber('scale', scale, { min: -Infinity, max: Infinity, minOpen: true, maxOpen: true });
  checkNumber('dropout', dropout, { min: 0, max: 1, maxOpen: true });
  checkSize('seed', seed, Number.MAX_SAFE_INTEGER);
  checkBoolean('weights', weights);
  return { scale: scale ?? NaN, dropout, seed, weights };
}

function checkOptions(name, options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${name}: expected an options object, got ${describe(options)}`);
  }
  return options;
}

export function createFunctions(module) {
  function kernelRegression(args) {
    const { keys, values, queries, kernel = 'gaussian', bandwidth = 1, weights = false } = checkOptions('kernelRegression', args);
    const k = asMatrix('keys', keys);
    const v = asMatrix('values', values);
    const q = asMatrix('queries', queries);
    const [n, dx] = k.shape;
    const [m] = q.shape;
    const dy = v.shape[1];
    checkTensor('values', v, [n, -1]);
    checkTensor('queries', q, [-1, dx]);
    checkChoice('kernel', kernel, KERNELS);
    checkNumber('bandwidth', bandwidth, { min: 0, max: Infinity, minOpen: true, maxOpen: true });
    checkBoolean('weights', weights);
    checkAllocation('weights', [m, n]);
    return withHeap(module, (scope) => {
      const out = scope.alloc(m * dy);
      const w = scope.alloc(m * n);
      check(module.kernelRegression(arg(scope.put(k.data), k.shape), arg(scope.put(v.data), v.shape),
        arg(scope.put(q.data), q.shape), kernel, bandwidth, arg(out, [m, dy]), arg(w, [m, n])));
      const result = { output: tensor(scope.take(out, m * dy), [m, dy]) };
      if (weights) result.weights = tensor(scope.take(w, m * n), [m, n]);
      return result;
    });
  }

  function leaveOneOut(args) {
    const { keys, values, kernel = 'gaussian', bandwidths } = checkOptions('leaveOneOut', args);
    const k = asMatrix('keys', keys);
    const v = asMatrix('values', values);
    checkTensor('values', v, [k.shape[0], -1]);
    checkChoice('kernel', kernel, KERNELS);
    if (!(Array.isArray(bandwidths) || bandwidths instanceof Float32Array) || bandwidths.length === 0) {
      throw new TypeError(`bandwidths: expected a non-empty array of numbers, got ${describe(bandwidths)}`);
    }
    const list = Float32Array.from(bandwidths, (b, i) =>
      checkNumber(`bandwidths[${i}]`, b, { min: 0, max: Infinity, minOpen: true, maxOpen: true }));
    return withHeap(module, (scope) => {
      const errors = scope.alloc(list.length);
      const best = scope.alloc(1);
      check(module.leaveOneOut(arg(scope.put(k.data), k.shape), arg(scope.put(v.data), v.shape),
        kernel, scope.put(list), list.length, errors, best));
      return { errors: scope.take(errors, list.length), best: scope.take(best, 1)[0] };
    });
  }

  function softmax(x) {
    const shape = checkTensor('x', x, null);
    if (shape.length === 0) throw new RangeError('x: expected at least one axis, got shape []');
    const cols = shape[shape.length - 1];
    const rows = cols === 0 ? 0 : x.data.length / cols;
    return withHeap(module, (scope) => {
      const pointer = scope.put(x.data);
      check(module.softmax(arg(pointer, [rows, cols])));
      return tensor(scope.take(pointer, x.data.length), [...shape]);
    });
  }

  function maskedSoftmax(x, validLens, options) {
    const shape = checkRank3('x', x);
    const [batch, nq, nk] = shape;
    const { fill } = checkOptions('options', options);
    return withHeap(module, (scope) => {
      const mask = prepareMask(scope, { validLens, fill }, { batch, nq, nk });
      const pointer = scope.put(x.data);
      check(module.maskedSoftmax(arg(pointer, shape), mask));
      return tensor(scope.take(pointer, x.data.length), [...shape]);
    });
  }

  // The score parameters `fn` needs, checked against q [.., dq] and k [.., dk].
  function scoreParams(scope, fn, options, dq, dk) {
    const params = { Wq: 0, Wk: 0, wv: 0, W: 0, hidden: 0 };
    if (fn === 'additive') {
      const [hidden] = checkTensor('wv', options.wv, [-1]);
      checkTensor('Wq', options.Wq, [hidden, dq]);
      checkTensor('Wk', options.Wk, [hidden, dk]);
      Object.assign(params, { Wq: scope.put(options.Wq.data), Wk: scope.put(options.Wk.data), wv: scope.put(options.wv.data), hidden });
    } else if (fn === 'general') {
      checkTensor('W', options.W, [dq, dk]);
      params.W = scope.put(options.W.data);
    }
    return params;
  }

  function score(q, k, options) {
    const opts = checkOptions('options', options);
    const fn = checkChoice('fn', opts.fn ?? 'scaled-dot', SCORE_FUNCTIONS);
    const [batch, nq, dq] = checkRank3('q', q);
    const sameWidth = !['additive', 'general'].includes(fn);
    const [, nk, dk] = checkRank3('k', k, [batch, -1, sameWidth ? dq : -1]);
    checkAllocation('scores', [batch, nq, nk]);
    return withHeap(module, (scope) => {
      const params = scoreParams(scope, fn, opts, dq, dk);
      const out = scope.alloc(batch * nq * nk);
      check(module.score(fn, arg(scope.put(q.data), q.shape), arg(scope.put(k.data), k.shape), params, arg(out, [batch, nq, nk])));
      return tensor(scope.take(out, batch * nq * nk), [batch, nq, nk]);
    });
  }

  function bmm(a, b) {
    const [batch, n, inner] = checkRank3('a', a);
    const [, , m] = checkRank3('b', b, [batch, inner, -1]);
    checkAllocation('output', [batch, n, m]);
    return withHeap(module, (scope) => {
      const out = scope.alloc(batch * n * m);
      check(module.bmm(arg(scope.put(a.data), a.shape), arg(scope.put(b.data), b.shape), arg(out, [batch, n, m])));
      return tensor(scope.take(out, batch * n * m), [batch, n, m]);
    });
  }

  // The shared tail of the two attention functions: masks, buffers, call, copy out.
  function attend(q, k, v, opts, call) {
    const [batch, nq] = q.shape;
    const [, nk] = k.shape;
    const [, , dv] = checkRank3('v', v, [batch, nk, -1]);
    const { scale, dropout, seed, weights } = checkAttentionOptions(opts);
    if (weights) checkAllocation('weights', [batch, nq, nk]);
    checkAllocation('output', [batch, nq, dv]);
    return withHeap(module, (scope) => {
      const mask = prepareMask(scope, opts, { batch, nq, nk });
      const out = scope.alloc(batch * nq * dv);
      const w = weights ? scope.alloc(batch * nq * nk) : 0;
      check(call(scope, mask, { scale, dropout, seed }, arg(out, [batch, nq, dv]), arg(w, [batch, nq, nk])));
      const result = { output: tensor(scope.take(out, batch * nq * dv), [batch, nq, dv]) };
      if (weights) result.weights = tensor(scope.take(w, batch * nq * nk), [batch, nq, nk]);
      return result;
    });
  }

  function scaledDotProductAttention(q, k, v, options) {
    const opts = checkOptions('options', options);
    const [batch, , d] = checkRank3('q', q);
    checkRank3('k', k, [batch, -1, d]);
    return attend(q, k, v, opts, (scope, mask, attention, out, w) =>
      module.scaledDotProductAttention(arg(scope.put(q.data), q.shape), arg(scope.put(k.data), k.shape),
        arg(scope.put(v.data), v.shape), mask, attention, out, w));
  }

  function additiveAttention(q, k, v, options) {
    const opts = checkOptions('options', options);
    const [batch, , dq] = checkRank3('q', q);
    const [, , dk] = checkRank3('k', k, [batch, -1, -1]);
    return attend(q, k, v, opts, (scope, mask, attention, out, w) =>
      module.additiveAttention(arg(scope.put(q.data), q.shape), arg(scope.put(k.data), k.shape),
        arg(scope.put(v.data), v.shape), scoreParams(scope, 'additive', opts, dq, dk), mask, attention, out, w));
  }

  function positionalEncoding(n, d) {
    checkSize('n', n);
    checkSize('d', d);
    checkAllocation('output', [n, d]);
    return withHeap(module, (scope) => {
      const out = scope.alloc(n * d);
      check(module.positionalEncoding(n, d, out));
      return tensor(scope.take(out, n * d), [n, d]);
    });
  }

  return {
    kernelRegression, leaveOneOut, softmax, maskedSoftmax, score, bmm,
    scaledDotProductAttention, additiveAttention, positionalEncoding,
  };
}
