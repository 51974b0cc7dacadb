// Builds the ONNX models the onnxruntime-web peers run, as serialized ModelProto bytes, with a
// minimal protobuf encoder (no python/onnx here, nothing downloaded). Field numbers are those of
// onnx.proto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto).
//
//   attentionMatMulModel(n, d): Q, K, V [n, d] → Transpose(K) → MatMul(Q, Kt) → Mul(1/√d)
//                               → Softmax(axis=-1) → MatMul(·, V) → O [n, d]        (opset 17)
//   attentionMhaModel(n, d):    com.microsoft MultiHeadAttention, num_heads = 1, on query/key/
//                               value [1, n, d] → O [1, n, d]     (opset 17 + com.microsoft 1)

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
