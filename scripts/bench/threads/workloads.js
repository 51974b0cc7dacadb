// The workloads of the threads section, in one list, so that child.js (which times them) and
// neighbour.js (which runs a copy of one beside them, for the machine's bound) build
// the same calls. threadWorkloads({ quick }) returns [{ name, make, check?, peer? }]:
//   make(module) → { fn, release? }: the call to time on a loaded module;
//   check(module) → checked: compares the module's output with the float64 reference (throws);
//   peer(loaded, checked) → { name, fn, release } or nothing: the same call on onnxruntime-web.
// Inputs are made on first use and kept, as every workload is built on several modules.
import { multiHeadAttention, scaledDotProductAttentionBackward } from '../../../harness/reference.js';
import { uniforms as random } from '../../../web/shared/random.js';
import { DECODE } from '../attention/decode.js';
import { gaussianCalls, regressionTask } from '../attention/regression.js';
import { attentionTask, checkRows, expectClose, queryRows } from '../shared/check.js';
import { SIZES as CAUSAL_LM_SIZES, STEP as CAUSAL_LM_STEP, tokensOf as causalTokens } from '../training/causal-lm.js';
import { SIZES } from '../training/seq2seq.js';
import { batchOf } from '../training/training.js';

export const MHA_CONFIG = { embedDim: 512, numHeads: 8 };
export const mhaLayer = (m) => new m.MultiHeadAttention(MHA_CONFIG).resetParameters(5);

const once = (build) => {
  let value;
  return () => (value ??= build());
};
const call = (fn) => ({ fn });

function sdpaWorkloads(quick) {
  const list = [];
  for (const d of quick ? [64] : [64, 128]) {
    for (const n of quick ? [1024] : [1024, 4096, 8192]) {
      const task = once(() => attentionTask(n, d));
      list.push({
        name: `SDPA n = ${n}, d = ${d}`,
        make: (m) => { const t = task(); return call(() => m.scaledDotProductAttention(t.q, t.k, t.v).output.data); },
        check: (m) => { const t = task(); checkRows(`ours at n = ${n}`, m.scaledDotProductAttention(t.q, t.k, t.v).output.data, t, [0, n >> 1, n - 1]); },
        peer: async ({ ortMatMul }) => ortMatMul
          && { name: ortMatMul.name, fn: await ortMatMul.make(task()), release: () => ortMatMul.release() },
      });
    }
  }
  for (const n of quick ? [1024] : [1024, 4096]) {
    const task = once(() => attentionTask(n, 64));
    list.push({
      name: `SDPA causal n = ${n}, d = 64`,
      make: (m) => { const t = task(); return call(() => m.scaledDotProductAttention(t.q, t.k, t.v, { causal: true }).output.data); },
    });
  }
  return list;
}

// The backward on [1, n, 64], its dq rows against the float64 reference.
function backwardWorkloads(quick) {
  return (quick ? [1024] : [1024, 4096]).map((n) => {
    const task = once(() => ({ ...attentionTask(n, 64), g: { data: random(n * 64, 9), shape: [1, n, 64] } }));
    return {
      name: `SDPA backward n = ${n}, d = 64`,
      make: (m) => { const t = task(); return call(() => m.scaledDotProductAttentionBackward(t.q, t.k, t.v, t.g)); },
      check: (m) => {
        const t = task();
        const rows = [0, n - 1];
        const want = scaledDotProductAttentionBackward(queryRows(t.q.data, 64, rows), t.k, t.v, queryRows(t.g.data, 64, rows)).dq.data;
        const got = m.scaledDotProductAttentionBackward(t.q, t.k, t.v, t.g).dq.data;
        expectClose(`ours: backward dq at n = ${n}`, Float32Array.from(rows.flatMap((i) => [...got.subarray(i * 64, (i + 1) * 64)])), want);
      },
    };
  });
}

// Multi-head self-attention, E = 512, 8 heads (nn.MultiheadAttention's four projections). The
// check returns our output, which the peer's make compares element by element.
function mhaWorkloads(quick) {
  return (quick ? [512] : [512, 1024]).map((n) => {
    const input = once(() => ({ data: random(n * 512, 13), shape: [1, n, 512] }));
    return {
      name: `multi-head E = 512, 8 heads, n = ${n}`,
      make: (m) => {
        const mha = mhaLayer(m), x = input();
        return { fn: () => mha.forward(x, x, x, { needWeights: false }).output.data, release: () => mha.dispose() };
      },
      check: (m) => {
        const probe = mhaLayer(m), x = input();
        const expected = probe.forward(x, x, x, { needWeights: false }).output.data;
        if (n <= 512) expectClose(`ours: multi-head at n = ${n} vs the float64 reference`, expected, multiHeadAttention(probe.stateDict(), MHA_CONFIG, x).output.data);
        probe.dispose();
        return expected;
      },
      peer: async ({ mhaPeer }, expected) => mhaPeer
        && { name: mhaPeer.name, fn: await mhaPeer.make({ n, x: input().data, expected }), release: () => mhaPeer.release() },
    };
  });
}

// One token against a resident KV cache: 12 heads, d = 64 (decode.js's shape).
function decodeWorkload(quick) {
  const { heads, d } = DECODE;
  const n = quick ? 4096 : 16384;
  const inputs = once(() => ({ k: random(heads * n * d, 32), v: random(heads * n * d, 33), q: { data: random(heads * d, 31), shape: [1, heads, 1, d] } }));
  return {
    name: `KV-cache decode, 12 heads, n = ${n}`,
    make: (m) => {
      const { k, v, q } = inputs();
      const cache = new m.KVCache({ batch: 1, heads, headDim: d, capacity: n });
      cache.append({ data: k, shape: [1, heads, n, d] }, { data: v, shape: [1, heads, n, d] });
      return { fn: () => cache.attend(q).output.data, release: () => cache.dispose() };
    },
  };
}

// A Seq2Seq training step at d2l's size (seq2seq.js).
function seq2seqWorkload() {
  const size = SIZES[0];
  const batch = once(() => batchOf(size.batch, size.steps, size.config.srcVocabSize, 3));
  return {
    name: "Seq2Seq training step, d2l's size",
    make: (m) => {
      const { src, lens, tgtIn, tgtOut } = batch();
      const model = new m.Seq2SeqAttention({ ...size.config, seed: 1 });
      return { fn: () => model.trainStep(src, lens, tgtIn, tgtOut, { pad: 0, lr: 0.005, clip: 1 }), release: () => model.dispose() };
    },
  };
}

// A CausalLM training step (causal-lm.js): the GPT-2-like size of issue 34's target, the small
// one in --quick.
function causalLMWorkload(quick) {
  const size = CAUSAL_LM_SIZES.find((s) => (s.label === 'small') === quick);
  const tokens = once(() => causalTokens(size.batch, size.steps + 1, size.config.vocabSize, 7));
  return {
    name: `CausalLM training step, ${size.label}`,
    make: (m) => {
      const model = m.CausalLM.gpt2({ ...size.config, maxPositions: size.steps, seed: 1 });
      return { fn: () => model.trainStep(tokens(), CAUSAL_LM_STEP), release: () => model.dispose() };
    },
  };
}

// Gaussian kernel regression and leave-one-out at d = 1 (regression.js's d = 1 calls): the rows
// in double, a block of 16 queries a task.
function regressionWorkloads(quick) {
  const n = quick ? 4096 : 8192;
  const task = once(() => regressionTask(n));
  return ['kernelRegression', 'leaveOneOut'].map((name, i) => ({
    name: `${name} Gaussian, d = 1, n = ${n}`,
    make: (m) => call(gaussianCalls(m, task())[i].fn),
  }));
}

export function threadWorkloads({ quick = false } = {}) {
  return [
    ...sdpaWorkloads(quick), ...backwardWorkloads(quick), ...mhaWorkloads(quick), decodeWorkload(quick), seq2seqWorkload(),
    causalLMWorkload(quick), ...regressionWorkloads(quick),
  ];
}
