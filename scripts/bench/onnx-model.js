// Builds the ONNX models the onnxruntime-web peers run, as serialized ModelProto bytes, with a
// minimal protobuf encoder (no python/onnx here, nothing downloaded). Field numbers are those of
// onnx.proto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto).
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

// ---- protobuf wire format ----------------------------------------------------------------------
// Wire types: 0 = varint, 1 = 64-bit, 2 = length-delimited, 5 = 32-bit.
const utf8 = new TextEncoder();

class Writer {
  constructor() { this.bytes = []; }
  varint(value) {
    let v = BigInt.asUintN(64, BigInt(value)); // negative int32/int64 encode as 10-byte two's complement
    while (v >= 0x80n) { this.bytes.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
    this.bytes.push(Number(v));
    return this;
  }
  tag(field, wire) { return this.varint((field << 3) | wire); }
  raw(bytes) { for (const b of bytes) this.bytes.push(b); return this; }
  // Field helpers; each skips nothing (callers decide what to emit).
  int(field, value) { return this.tag(field, 0).varint(value); }
  float(field, value) {
    const buf = new Uint8Array(4);
    new DataView(buf.buffer).setFloat32(0, value, true);
    return this.tag(field, 5).raw(buf);
  }
  bytesField(field, bytes) { return this.tag(field, 2).varint(bytes.length).raw(bytes); }
  string(field, s) { return this.bytesField(field, utf8.encode(s)); }
  message(field, writer) { return this.bytesField(field, writer.finish()); }
  packedInts(field, values) {
    const inner = new Writer();
    for (const v of values) inner.varint(v);
    return this.bytesField(field, inner.finish());
  }
  finish() { return Uint8Array.from(this.bytes); }
}

// ---- ONNX messages -----------------------------------------------------------------------------
const FLOAT = 1; // TensorProto.DataType.FLOAT
const INT32 = 6; // TensorProto.DataType.INT32
const INT64 = 7; // TensorProto.DataType.INT64
const ATTR = { FLOAT: 1, INT: 2, STRING: 3, INTS: 7 }; // AttributeProto.AttributeType

// TypeProto { tensor_type = 1: Tensor { elem_type = 1, shape = 2: TensorShapeProto { dim = 1:
// Dimension { dim_value = 1 | dim_param = 2 } } } }
function valueInfo(name, dims, elemType = FLOAT) {
  const shape = new Writer();
  for (const d of dims) {
    const dim = new Writer();
    if (typeof d === 'number') dim.int(1, d); else dim.string(2, d);
    shape.message(1, dim);
  }
  const tensorType = new Writer().int(1, elemType).message(2, shape);
  const type = new Writer().message(1, tensorType);
  return new Writer().string(1, name).message(2, type); // ValueInfoProto { name = 1, type = 2 }
}

// TensorProto { dims = 1, data_type = 2, name = 8, raw_data = 9 (little-endian) }
function floatTensor(name, dims, values) {
  const data = new Float32Array(values);
  const w = new Writer();
  if (dims.length) w.packedInts(1, dims);
  return w.int(2, FLOAT).string(8, name).bytesField(9, new Uint8Array(data.buffer));
}

// An INT32 tensor: raw_data as little-endian int32.
function int32Tensor(name, dims, values) {
  const data = Int32Array.from(values);
  const w = new Writer();
  if (dims.length) w.packedInts(1, dims);
  return w.int(2, INT32).string(8, name).bytesField(9, new Uint8Array(data.buffer));
}

// An INT64 tensor (Reshape's shape input): raw_data as little-endian int64.
function int64Tensor(name, dims, values) {
  const data = BigInt64Array.from(values, (v) => BigInt(v));
  const w = new Writer();
  if (dims.length) w.packedInts(1, dims);
  return w.int(2, INT64).string(8, name).bytesField(9, new Uint8Array(data.buffer));
}

// AttributeProto { name = 1, f = 2, i = 3, s = 4, ints = 8, type = 20 }
function attribute(name, type, value) {
  const w = new Writer().string(1, name);
  if (type === ATTR.FLOAT) w.float(2, value);
  else if (type === ATTR.INT) w.int(3, value);
  else if (type === ATTR.STRING) w.string(4, value);
  else if (type === ATTR.INTS) for (const v of value) w.int(8, v); // unpacked, as onnx writes it
  else throw new Error(`attribute type ${type} not supported`);
  return w.int(20, type);
}

// NodeProto { input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7 }
function node(opType, inputs, outputs, { name = outputs[0], domain = '', attributes = [] } = {}) {
  const w = new Writer();
  for (const x of inputs) w.string(1, x);
  for (const x of outputs) w.string(2, x);
  w.string(3, name).string(4, opType);
  for (const a of attributes) w.message(5, a);
  if (domain) w.string(7, domain);
  return w;
}

// GraphProto { node = 1, name = 2, initializer = 5, input = 11, output = 12 }
function graph(name, { nodes, inputs, outputs, initializers = [] }) {
  const w = new Writer();
  for (const x of nodes) w.message(1, x);
  w.string(2, name);
  for (const x of initializers) w.message(5, x);
  for (const x of inputs) w.message(11, x);
  for (const x of outputs) w.message(12, x);
  return w;
}

// ModelProto { ir_version = 1, producer_name = 2, graph = 7, opset_import = 8: OperatorSetIdProto
// { domain = 1, version = 2 } }. IR version 8 goes with opset 17.
function model(g, opsets) {
  const w = new Writer().int(1, 8).string(2, 'attention-wasm bench');
  w.message(7, g);
  for (const [domain, version] of opsets) {
    const op = new Writer();
    if (domain) op.string(1, domain);
    w.message(8, op.int(2, version));
  }
  return w.finish();
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
