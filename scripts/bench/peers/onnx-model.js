// Builds the ONNX models the onnxruntime-web peers run, as serialized ModelProto bytes, encoded
// by protobufjs from the messages of onnx-subset.proto (ONNX's own names and field numbers):
//
//   attentionMatMulModel(n, d): Q, K, V [n, d] → Transpose(K) → MatMul(Q, Kt) → Mul(1/√d)
//                               → Softmax(axis=-1) → MatMul(·, V) → O [n, d]        (opset 17)
//   attentionMhaModel(n, d):    com.microsoft MultiHeadAttention, num_heads = 1, on query/key/
//                               value [1, n, d] → O [1, n, d]     (opset 17 + com.microsoft 1)
//   gqaModel(n, heads, kvHeads, d): com.microsoft GroupQueryAttention (causal prefill, no past),
//                               query [1, n, heads·d], key and value [1, n, kvHeads·d] →
//                               O [1, n, heads·d]
//
// Multi-head self-attention with the projections of torch.nn.MultiheadAttention, x [1, n, E] →
// y [1, n, E], the weights as initializers (from a PyTorch state dict, see splitStateDict):
//   mhaContribModel(n, E, heads, dict): Q = x·Wqᵀ + bq, K = x·Wkᵀ + bk, V = x·Wvᵀ + bv
//       (MatMul + Add), com.microsoft MultiHeadAttention(Q, K, V, num_heads), then ·Woᵀ + bo
//   mhaPlainModel(n, E, heads, dict):   the same projections; heads by Reshape [1, n, h, E/h] +
//       Transpose, then MatMul(Q, Kᵀ), Mul(1/√(E/h)), Softmax, MatMul(·, V), Transpose +
//       Reshape back to [1, n, E], then ·Woᵀ + bo (standard ops only, opset 17)
//
// The shapes are fixed (n is part of every model), as the weights are: a model per size and
// state dict, built in milliseconds, so nothing is written to disk.
import protobuf from 'protobufjs';
import { fileURLToPath } from 'node:url';

const onnx = protobuf.loadSync(fileURLToPath(new URL('./onnx-subset.proto', import.meta.url)));
const ModelProto = onnx.lookupType('onnx.ModelProto');
const { FLOAT, INT32, INT64 } = onnx.lookupEnum('onnx.TensorProto.DataType').values;
const ATTR = onnx.lookupEnum('onnx.AttributeProto.AttributeType').values;

// ---- ONNX messages, as the plain objects protobufjs encodes ------------------------------------
const bytesOf = (typed) => new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);

// A graph input or output: a tensor of `elemType` with fixed (number) or named (string) dims.
function valueInfo(name, dims, elemType = FLOAT) {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType, shape: { dim } } } };
}

// An initializer: the values as little-endian raw_data (Float32Array, Int32Array and
// BigInt64Array are little-endian on every platform Node and wasm run on).
const tensor = (name, dims, dataType, data) => ({ name, dims, dataType, rawData: bytesOf(data) });
const floatTensor = (name, dims, values) => tensor(name, dims, FLOAT, new Float32Array(values));
const int32Tensor = (name, dims, values) => tensor(name, dims, INT32, Int32Array.from(values));
// Reshape's shape input.
const int64Tensor = (name, dims, values) => tensor(name, dims, INT64, BigInt64Array.from(values, BigInt));

// The attribute's value goes in the field of its type: f, i or ints (the graphs use no other).
function attribute(name, type, value) {
  const field = { [ATTR.FLOAT]: 'f', [ATTR.INT]: 'i', [ATTR.INTS]: 'ints' }[type];
  if (!field) throw new Error(`attribute type ${type} not supported`);
  return { name, type, [field]: value };
}

function node(opType, inputs, outputs, { name = outputs[0], domain = '', attributes = [] } = {}) {
  return { input: inputs, output: outputs, name, opType, attribute: attributes, ...(domain ? { domain } : {}) };
}

const graph = (name, { nodes, inputs, outputs, initializers = [] }) => ({ name, node: nodes, initializer: initializers, input: inputs, output: outputs });

// IR version 8 goes with opset 17. `opsets`: [[domain, version]], '' for ONNX's own.
function model(g, opsets) {
  const message = ModelProto.fromObject({
    irVersion: 8,
    producerName: 'attention-wasm bench',
    graph: g,
    opsetImport: opsets.map(([domain, version]) => ({ ...(domain ? { domain } : {}), version })),
  });
  return ModelProto.encode(message).finish();
}

// ---- the attention models ----------------------------------------------------------------------
export function attentionMatMulModel(n, d) {
  const g = graph('attention_matmul', {
    nodes: [
      node('Transpose', ['K'], ['Kt'], { attributes: [attribute('perm', ATTR.INTS, [1, 0])] }),
      node('MatMul', ['Q', 'Kt'], ['S']),
      node('Mul', ['S', 'scale'], ['S_scaled']),
      node('Softmax', ['S_scaled'], ['P'], { attributes: [attribute('axis', ATTR.INT, -1)] }),
      node('MatMul', ['P', 'V'], ['O']),
    ],
    initializers: [floatTensor('scale', [], [1 / Math.sqrt(d)])],
    inputs: [valueInfo('Q', [n, d]), valueInfo('K', [n, d]), valueInfo('V', [n, d])],
    outputs: [valueInfo('O', [n, d])],
  });
  return model(g, [['', 17]]);
}

export function attentionMhaModel(n, d) {
  const g = graph('attention_mha', {
    nodes: [
      node('MultiHeadAttention', ['query', 'key', 'value'], ['O'], {
        domain: 'com.microsoft',
        attributes: [attribute('num_heads', ATTR.INT, 1), attribute('scale', ATTR.FLOAT, 1 / Math.sqrt(d))],
      }),
    ],
    inputs: [valueInfo('query', [1, n, d]), valueInfo('key', [1, n, d]), valueInfo('value', [1, n, d])],
    outputs: [valueInfo('O', [1, n, d])],
  });
  return model(g, [['', 17], ['com.microsoft', 1]]);
}

// GroupQueryAttention's prefill: no past keys and values (inputs 3 and 4 left out), seqlens_k
// = [n - 1] and total_sequence_length = n as constants; causal by the op's definition. The node's
// present_key and present_value outputs are not the graph's.
export function gqaModel(n, heads, kvHeads, d) {
  const g = graph('gqa', {
    nodes: [
      node('GroupQueryAttention', ['query', 'key', 'value', '', '', 'seqlens_k', 'total_sequence_length'],
        ['O', 'present_key', 'present_value'], {
          domain: 'com.microsoft',
          attributes: [attribute('num_heads', ATTR.INT, heads), attribute('kv_num_heads', ATTR.INT, kvHeads),
            attribute('scale', ATTR.FLOAT, 1 / Math.sqrt(d))],
        }),
    ],
    initializers: [int32Tensor('seqlens_k', [1], [n - 1]), int32Tensor('total_sequence_length', [], [n])],
    inputs: [valueInfo('query', [1, n, heads * d]), valueInfo('key', [1, n, kvHeads * d]), valueInfo('value', [1, n, kvHeads * d])],
    outputs: [valueInfo('O', [1, n, heads * d])],
  });
  return model(g, [['', 17], ['com.microsoft', 1]]);
}

// ---- multi-head self-attention with projections --------------------------------------------------
// PyTorch keeps Linear weights as [out, in] and computes y = x·Wᵀ + b; ONNX MatMul(x, B) wants
// B = Wᵀ [in, out]. The four E x E weights and biases of a torch.nn.MultiheadAttention state dict
// (in_proj_weight [3E, E] = Wq; Wk; Wv stacked by rows, in_proj_bias [3E], out_proj.weight,
// out_proj.bias), each weight returned as W (PyTorch layout) and Wt (transposed).
export function splitStateDict(dict, E) {
  const inW = dict.in_proj_weight.data, inB = dict.in_proj_bias.data;
  const transpose = (w) => {
    const t = new Float32Array(E * E);
    for (let o = 0; o < E; o++) for (let i = 0; i < E; i++) t[i * E + o] = w[o * E + i];
    return t;
  };
  const part = (w, b) => ({ W: w, Wt: transpose(w), b });
  return {
    q: part(inW.subarray(0, E * E), inB.subarray(0, E)),
    k: part(inW.subarray(E * E, 2 * E * E), inB.subarray(E, 2 * E)),
    v: part(inW.subarray(2 * E * E, 3 * E * E), inB.subarray(2 * E, 3 * E)),
    o: part(dict['out_proj.weight'].data, dict['out_proj.bias'].data),
  };
}

// MatMul(input, Wᵀ) + b as two nodes and two initializers named after `p`.
function linear(p, input, output, weights, E) {
  return {
    nodes: [node('MatMul', [input, `${p}_Wt`], [`${p}_mm`]), node('Add', [`${p}_mm`, `${p}_b`], [output])],
    initializers: [floatTensor(`${p}_Wt`, [E, E], weights.Wt), floatTensor(`${p}_b`, [E], weights.b)],
  };
}

function mhaGraph(name, n, E, dict, middle) {
  const w = splitStateDict(dict, E);
  const parts = [linear('q', 'x', 'Q', w.q, E), linear('k', 'x', 'K', w.k, E), linear('v', 'x', 'V', w.v, E)];
  const out = linear('o', 'A', 'y', w.o, E);
  return graph(name, {
    nodes: [...parts.flatMap((p) => p.nodes), ...middle.nodes, ...out.nodes],
    initializers: [...parts.flatMap((p) => p.initializers), ...(middle.initializers ?? []), ...out.initializers],
    inputs: [valueInfo('x', [1, n, E])],
    outputs: [valueInfo('y', [1, n, E])],
  });
}

export function mhaContribModel(n, E, heads, dict) {
  const g = mhaGraph('mha_contrib', n, E, dict, {
    nodes: [node('MultiHeadAttention', ['Q', 'K', 'V'], ['A'], {
      domain: 'com.microsoft',
      attributes: [attribute('num_heads', ATTR.INT, heads), attribute('scale', ATTR.FLOAT, 1 / Math.sqrt(E / heads))],
    })],
  });
  return model(g, [['', 17], ['com.microsoft', 1]]);
}

export function mhaPlainModel(n, E, heads, dict) {
  const hd = E / heads;
  const perm = (p) => [attribute('perm', ATTR.INTS, p)];
  const g = mhaGraph('mha_plain', n, E, dict, {
    nodes: [
      node('Reshape', ['Q', 'heads_shape'], ['Q4']),
      node('Transpose', ['Q4'], ['Qh'], { attributes: perm([0, 2, 1, 3]) }), // [1, h, n, hd]
      node('Reshape', ['K', 'heads_shape'], ['K4']),
      node('Transpose', ['K4'], ['Kht'], { attributes: perm([0, 2, 3, 1]) }), // [1, h, hd, n]
      node('Reshape', ['V', 'heads_shape'], ['V4']),
      node('Transpose', ['V4'], ['Vh'], { attributes: perm([0, 2, 1, 3]) }), // [1, h, n, hd]
      node('MatMul', ['Qh', 'Kht'], ['S']), // [1, h, n, n]
      node('Mul', ['S', 'scale'], ['S_scaled']),
      node('Softmax', ['S_scaled'], ['P'], { attributes: [attribute('axis', ATTR.INT, -1)] }),
      node('MatMul', ['P', 'Vh'], ['Oh']), // [1, h, n, hd]
      node('Transpose', ['Oh'], ['O4'], { attributes: perm([0, 2, 1, 3]) }), // [1, n, h, hd]
      node('Reshape', ['O4', 'model_shape'], ['A']), // [1, n, E]
    ],
    initializers: [
      int64Tensor('heads_shape', [4], [1, n, heads, hd]),
      int64Tensor('model_shape', [3], [1, n, E]),
      floatTensor('scale', [], [1 / Math.sqrt(hd)]),
    ],
  });
  return model(g, [['', 17]]);
}
