// The stateless functions of the API, each: read its arguments once into records
// (arguments.js, mask.js), copy them into the wasm heap, call the core, map its status, copy the
// result out into fresh JS-owned arrays (heap.js). Checks that relate one argument to another
// are the core's (see the top of arguments.js). A new function takes the same three steps:
//   const o = readOptions('options', options, [...]); const x = readBatch('x', x); ...readMask(o, dims)
//   const out = output('output', shape);
//   return withHeap(module, [x, ...mask.buffers, out], (scope) => { check(module.f(...)); return scope.take(...); });

import {
  MAX_SIZE, ownRecord, readBatch, readBoolean, readFloat32, readOptions, readSize, readString,
  readTensor, describe, typedArrayType,
} from './arguments.js';
import { check, output, withHeap } from './heap.js';
import { MASK_OPTIONS, maskArg, readMask } from './mask.js';
import {
  MODIFIER_OPTIONS, NO_MODIFIERS, modifierBuffers, modifiersArg, readHeads, readModifiers,
} from './score-modifiers.js';
import { NO_TENSOR, tensorArg } from './tensor.js';

export const KERNELS = ['gaussian', 'boxcar', 'epanechnikov', 'constant'];
export const SCORE_FUNCTIONS = ['dot', 'scaled-dot', 'neg-sq-dist', 'additive', 'general'];

// A [n, d] matrix, or a vector [n] read as [n, 1] (1-D kernel regression).
function readMatrix(name, value) {
  const record = readTensor(name, value);
  const { shape } = record;
  if (shape.length === 1) return { ...record, shape: [shape[0], 1] };
  if (shape.length !== 2) throw new RangeError(`${name}: expected shape [n, d] or [n], got [${shape.join(', ')}]`);
  return record;
}

// The options of both attention functions besides the mask. Ranges are the core's (dropout in
// [0, 1), scale finite); seed and scale's absence are encoded here.
const ATTENTION_OPTIONS = [...MASK_OPTIONS, 'scale', 'dropout', 'seed', 'weights'];
function readAttentionOptions(o) {
  const scale = o.scale ?? undefined;
  return {
    hasScale: scale !== undefined,
    scale: scale === undefined ? 0 : readFloat32('scale', scale),
    dropout: readFloat32('dropout', o.dropout, 0),
    seed: readSize('seed', o.seed ?? 0, Number.MAX_SAFE_INTEGER),
    weights: readBoolean('weights', o.weights, false),
  };
}

// The score parameters `fn` needs, read as records; their shapes against q and k are the
// core's to check. Returns the records (for the heap) in ScoreParamsArg order.
function readScoreParams(fn, o) {
  if (fn === 'additive') {
    const wv = readTensor('wv', o.wv, { expected: [-1] });
    return { wv, Wq: readTensor('Wq', o.Wq, { expected: [-1, -1] }), Wk: readTensor('Wk', o.Wk, { expected: [-1, -1] }) };
  }
  if (fn === 'general') return { W: readTensor('W', o.W, { expected: [-1, -1] }) };
  return {};
}

function scoreParamsArg(scope, params) {
  const put = (record) => (record ? tensorArg(scope.put(record), record.shape) : NO_TENSOR);
  return { Wq: put(params.Wq), Wk: put(params.Wk), wv: put(params.wv), W: put(params.W) };
}

// bandwidths: a non-empty number[] or Float32Array, copied; each a float32 > 0 and finite.
function readBandwidths(value) {
  let list;
  if (Array.isArray(value)) {
    const count = value.length;
    if (count > MAX_SIZE) throw new RangeError(`bandwidths: expected at most ${MAX_SIZE} bandwidths, got ${count}`);
    list = [];
    for (let i = 0; i < count; i++) list.push(value[i]);
  } else if (typedArrayType(value) === 'Float32Array') {
    list = Array.from(readTensor('bandwidths', value, { bare: true }).data);
  }
  if (!list || list.length === 0) {
    throw new TypeError(`bandwidths: expected a non-empty array of numbers, got ${describe(value)}`);
  }
  const bandwidths = Float32Array.from(list, (b, i) => {
    readFloat32(`bandwidths[${i}]`, b);
    // The core checks this too, but its message cannot say which entry.
    if (!(b > 0 && b < Infinity)) throw new RangeError(`bandwidths[${i}]: expected a number in (0, Infinity), got ${b}`);
    return b;
  });
  return ownRecord('bandwidths', bandwidths);
}

export function createFunctions(module) {
  function kernelRegression(args) {
    const o = readOptions('kernelRegression', args, ['keys', 'values', 'queries', 'kernel', 'bandwidth', 'weights']);
    const keys = readMatrix('keys', o.keys);
    const values = readMatrix('values', o.values);
    const queries = readMatrix('queries', o.queries);
    const kernel = readString('kernel', o.kernel, 'gaussian', KERNELS);
    const bandwidth = readFloat32('bandwidth', o.bandwidth, 1);
    const needWeights = readBoolean('weights', o.weights, false);
    const [m] = queries.shape;
    const out = output('output', [m, values.shape[1]]);
    // Without `weights: true` no [m, n] buffer is asked for (or checked against the heap).
    const weights = needWeights ? output('weights', [m, keys.shape[0]]) : null;
    return withHeap(module, [keys, values, queries, out, weights].filter(Boolean), (scope) => {
      const outPointer = scope.alloc(out);
      const weightsPointer = weights ? scope.alloc(weights) : 0;
      check(module.kernelRegression(
        tensorArg(scope.put(keys), keys.shape), tensorArg(scope.put(values), values.shape),
        tensorArg(scope.put(queries), queries.shape), kernel, bandwidth, tensorArg(outPointer, out.shape),
        weights ? tensorArg(weightsPointer, weights.shape) : NO_TENSOR,
      ));
      const result = { output: scope.take(outPointer, out) };
      if (weights) result.weights = scope.take(weightsPointer, weights);
      return result;
    });
  }

  function leaveOneOut(args) {
    const o = readOptions('leaveOneOut', args, ['keys', 'values', 'kernel', 'bandwidths']);
    const keys = readMatrix('keys', o.keys);
    const values = readMatrix('values', o.values);
    const kernel = readString('kernel', o.kernel, 'gaussian', KERNELS);
    const bandwidths = readBandwidths(o.bandwidths);
    const errors = output('errors', [bandwidths.count]);
    const best = output('best', [1]);
    return withHeap(module, [keys, values, bandwidths, errors, best], (scope) => {
      const errorsPointer = scope.alloc(errors);
      const bestPointer = scope.alloc(best);
      check(module.leaveOneOut(tensorArg(scope.put(keys), keys.shape), tensorArg(scope.put(values), values.shape),
        kernel, scope.put(bandwidths), bandwidths.count, errorsPointer, bestPointer));
      return { errors: scope.take(errorsPointer, errors).data, best: scope.take(bestPointer, best).data[0] };
    });
  }

  function kernelValues(args) {
    const o = readOptions('kernelValues', args, ['distances', 'kernel', 'bandwidth']);
    const distances = readTensor('distances', o.distances);
    const kernel = readString('kernel', o.kernel, 'gaussian', KERNELS);
    const bandwidth = readFloat32('bandwidth', o.bandwidth, 1);
    // In place: the result takes the distances' buffer in the heap.
    return withHeap(module, [distances], (scope) => {
      const pointer = scope.put(distances);
      check(module.kernelValues(kernel, pointer, distances.count, bandwidth));
      return scope.take(pointer, output('distances', distances.shape));
    });
  }

  function softmax(x) {
    const record = readTensor('x', x);
    const { shape } = record;
    if (shape.length === 0) throw new RangeError('x: expected at least one axis, got shape []');
    const cols = shape[shape.length - 1];
    const rows = cols === 0 ? 0 : record.count / cols;
    // In place: the result takes x's buffer in the heap.
    return withHeap(module, [record], (scope) => {
      const pointer = scope.put(record);
      check(module.softmax(tensorArg(pointer, [rows, cols])));
      return scope.take(pointer, output('x', shape));
    });
  }

  function maskedSoftmax(x, validLens, options) {
    const { fill } = readOptions('options', options, ['fill']);
    const record = readBatch('x', x);
    const [batch, nq, nk] = record.shape;
    const mask = readMask({ validLens, fill }, { batch, nq, nk });
    return withHeap(module, [record, ...mask.buffers], (scope) => {
      const arg = maskArg(scope, mask);
      const pointer = scope.put(record);
      check(module.maskedSoftmax(tensorArg(pointer, record.shape), arg));
      return scope.take(pointer, output('x', record.shape));
    });
  }

  function score(q, k, options) {
    const o = readOptions('options', options, ['fn', 'Wq', 'Wk', 'wv', 'W']);
    const fn = readString('fn', o.fn, 'scaled-dot', SCORE_FUNCTIONS);
    const qr = readBatch('q', q);
    const kr = readBatch('k', k);
    const params = readScoreParams(fn, o);
    const scores = output('scores', [qr.shape[0], qr.shape[1], kr.shape[1]]);
    return withHeap(module, [qr, kr, ...Object.values(params), scores], (scope) => {
      const pointer = scope.alloc(scores);
      check(module.score(fn, tensorArg(scope.put(qr), qr.shape), tensorArg(scope.put(kr), kr.shape),
        scoreParamsArg(scope, params), tensorArg(pointer, scores.shape)));
      return scope.take(pointer, scores);
    });
  }

  function bmm(a, b) {
    const ar = readBatch('a', a);
    const br = readBatch('b', b);
    const out = output('output', [ar.shape[0], ar.shape[1], br.shape[2]]);
    return withHeap(module, [ar, br, out], (scope) => {
      const pointer = scope.alloc(out);
      check(module.bmm(tensorArg(scope.put(ar), ar.shape), tensorArg(scope.put(br), br.shape), tensorArg(pointer, out.shape)));
      return scope.take(pointer, out);
    });
  }

  // What both attention functions and their backward passes read: q, k, v, the options, the
  // score parameters (additive), the mask, and scaled dot-product attention's heads layout and
  // score modifiers. `lead` holds the results' leading axes ([B], or [B, H] for 4-D inputs);
  // q, k, v go to the core as batches of matrices.
  function readAttention(q, k, v, options, fn) {
    // Additive scores are not scaled: additive attention reads no `scale`, and takes neither
    // heads nor score modifiers.
    const additive = fn === 'additive';
    const keys = additive
      ? [...ATTENTION_OPTIONS.filter((key) => key !== 'scale'), 'Wq', 'Wk', 'wv']
      : [...ATTENTION_OPTIONS, ...MODIFIER_OPTIONS, 'returnLse'];
    const o = readOptions('options', options, keys);
    const heads = additive
      ? { qr: readBatch('q', q), kr: readBatch('k', k), vr: readBatch('v', v), heads: 1, kvHeads: 1 }
      : readHeads(q, k, v);
    const { qr, kr, vr } = heads;
    const params = additive ? readScoreParams('additive', o) : {};
    const settings = readAttentionOptions(o);
    const modifiers = additive ? null : readModifiers(o, heads.heads);
    const returnLse = additive ? false : readBoolean('returnLse', o.returnLse, false);
    const [matrices, nq] = qr.shape;
    const batch = matrices / heads.heads;
    const nk = kr.shape[1];
    const mask = readMask(o, { batch, nq, nk, heads: heads.heads, headAxis: heads.lead?.length === 2 });
    return {
      qr, kr, vr, params, settings, mask, modifiers, returnLse, heads, nq, nk, dv: vr.shape[2],
      lead: heads.lead ?? [batch],
      buffers: [qr, kr, vr, ...Object.values(params), ...mask.buffers, ...(modifiers ? modifierBuffers(modifiers) : [])],
    };
  }

  // The heap arguments shared by a forward and a backward call: q, k, v as TensorArgs, the
  // score parameters (additive only), the mask and the AttentionArg.
  function attentionArgs(scope, call) {
    const { settings } = call;
    return {
      inputs: [call.qr, call.kr, call.vr].map((r) => tensorArg(scope.put(r), r.shape)),
      params: scoreParamsArg(scope, call.params),
      mask: maskArg(scope, call.mask),
      options: {
        hasScale: settings.hasScale, scale: settings.scale, dropout: settings.dropout, seed: settings.seed,
        ...(call.modifiers ? modifiersArg(scope, call.heads.heads, call.heads.kvHeads, call.modifiers) : NO_MODIFIERS),
      },
    };
  }

  // Both attention functions: read, then one core call with masks, buffers and results.
  function attention(q, k, v, options, fn) {
    const call = readAttention(q, k, v, options, fn);
    const { lead, nq, nk } = call;
    const matrices = call.qr.shape[0];
    const out = output('output', [...lead, nq, call.dv]);
    const weights = call.settings.weights ? output('weights', [...lead, nq, nk]) : null;
    const lse = call.returnLse ? output('lse', [...lead, nq]) : null;
    return withHeap(module, [...call.buffers, out, weights, lse].filter(Boolean), (scope) => {
      const outPointer = scope.alloc(out);
      const weightsPointer = weights ? scope.alloc(weights) : 0;
      const lsePointer = lse ? scope.alloc(lse) : 0;
      const a = attentionArgs(scope, call);
      const tail = [
        a.mask, a.options, tensorArg(outPointer, [matrices, nq, call.dv]),
        weights ? tensorArg(weightsPointer, [matrices, nq, nk]) : NO_TENSOR,
      ];
      check(fn === 'additive'
        ? module.additiveAttention(...a.inputs, a.params, ...tail)
        : module.scaledDotProductAttention(...a.inputs, ...tail, lsePointer));
      const result = { output: scope.take(outPointer, out) };
      if (weights) result.weights = scope.take(weightsPointer, weights);
      if (lse) result.lse = scope.take(lsePointer, lse);
      return result;
    });
  }

  const scaledDotProductAttention = (q, k, v, options) => attention(q, k, v, options, 'scaled-dot');
  const additiveAttention = (q, k, v, options) => attention(q, k, v, options, 'additive');

  // Gradients of sum(output * gradOutput): dq, dk, dv shaped like q, k, v (and, for additive
  // attention, dWq, dWk, dwv shaped like the parameters). gradOutput must be shaped like the
  // output; that check is here because the core names it grad_output.
  // With sinks, scaled dot-product attention's backward also returns dsinks [H] (H = 1 for 3-D
  // calls).
  function attentionBackward(q, k, v, gradOutput, options, fn) {
    const call = readAttention(q, k, v, options, fn);
    const grad = readTensor('gradOutput', gradOutput, { expected: [...call.lead, call.nq, call.dv] });
    const matrices = call.qr.shape[0];
    const flatGrad = { ...grad, shape: [matrices, call.nq, call.dv] };
    // Each gradient is shaped as its input was given (4-D inputs read as 3-D for the core).
    const [qShape, kShape, vShape] = call.heads.shapes ?? [call.qr.shape, call.kr.shape, call.vr.shape];
    const gradients = [['dq', call.qr, qShape], ['dk', call.kr, kShape], ['dv', call.vr, vShape]];
    if (fn === 'additive') {
      for (const name of ['Wq', 'Wk', 'wv']) gradients.push([`d${name}`, call.params[name], call.params[name].shape]);
    }
    if (call.modifiers?.sinks) gradients.push(['dsinks', call.modifiers.sinks, [call.heads.heads]]);
    const outputs = gradients.map(([name, , shape]) => output(name, shape));
    return withHeap(module, [...call.buffers, grad, ...outputs], (scope) => {
      const pointers = outputs.map((out) => scope.alloc(out));
      const a = attentionArgs(scope, call);
      const gradArg = tensorArg(scope.put(flatGrad), flatGrad.shape);
      const [dq, dk, dv] = gradients.slice(0, 3).map(([, like], i) => tensorArg(pointers[i], like.shape));
      check(fn === 'additive'
        ? module.additiveAttentionBackward(...a.inputs, a.params, gradArg, a.mask, a.options, dq, dk, dv, ...pointers.slice(3))
        : module.scaledDotProductAttentionBackward(...a.inputs, gradArg, a.mask, a.options, dq, dk, dv, pointers[3] ?? 0));
      return Object.fromEntries(outputs.map((out, i) => [out.name, scope.take(pointers[i], out)]));
    });
  }

  const scaledDotProductAttentionBackward = (q, k, v, gradOutput, options) =>
    attentionBackward(q, k, v, gradOutput, options, 'scaled-dot');
  const additiveAttentionBackward = (q, k, v, gradOutput, options) =>
    attentionBackward(q, k, v, gradOutput, options, 'additive');

  function positionalEncoding(n, d) {
    readSize('n', n);
    readSize('d', d);
    const out = output('output', [n, d]);
    return withHeap(module, [out], (scope) => {
      const pointer = scope.alloc(out);
      check(module.positionalEncoding(n, d, pointer));
      return scope.take(pointer, out);
    });
  }

  return {
    kernelRegression, leaveOneOut, kernelValues, softmax, maskedSoftmax, score, bmm,
    scaledDotProductAttention, additiveAttention, positionalEncoding,
    scaledDotProductAttentionBackward, additiveAttentionBackward,
  };
}
