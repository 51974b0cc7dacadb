// The CausalLM section of `npm run bench` (issue 34's targets), a GPT-2-like model at the
// issue's size (vocabulary 512, hiddenSize 256, 4 layers, 4 heads, MLP 1024, T 128, batch 8;
// AdamW lr 3e-4, betas (0.9, 0.95), weight decay 0.1, clip 1) and, alone in --quick, a small one:
//   1. a training step (forward, backward, clip, AdamW): our SIMD wasm build against PyTorch CPU
//      on one thread (Hugging Face's GPT-2 written out in scripts/fixtures/causal_lm.py, served
//      by causal_lm_torch.py beside this file), the losses checked equal before timing;
//   2. generation, greedy, of 256 new tokens: generate() through the KV caches against forward()
//      over the growing prefix at every step, and against PyTorch with its own cache, one thread;
//      the tokens checked equal.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { measured } from '../goals.js';
import { PeerMismatchError } from '../shared/check.js';
import { runAlone } from '../shared/standalone.js';
import { inTurns, outsideRunners, pytorchServer, startRunners, timeRunners } from './training.js';

export const STEP = { lr: 3e-4, betas: [0.9, 0.95], eps: 1e-8, weightDecay: 0.1, clip: 1 };
const TORCH_SCRIPT = fileURLToPath(new URL('./causal_lm_torch.py', import.meta.url));

export const SIZES = [
  { label: 'GPT-2-like', batch: 8, steps: 128, newTokens: 256, config: { vocabSize: 512, hiddenSize: 256, numLayers: 4, numHeads: 4, intermediateSize: 1024 } },
  { label: 'small', batch: 4, steps: 32, newTokens: 64, config: { vocabSize: 128, hiddenSize: 64, numLayers: 2, numHeads: 2, intermediateSize: 256 } },
];

// Token ids [batch, steps] from a fixed stream.
export function tokensOf(batch, steps, vocab, seed) {
  let state = seed;
  const data = new Int32Array(batch * steps);
  for (let i = 0; i < data.length; i++) {
    state = (state * 16807) % 2147483647;
    data[i] = state % vocab;
  }
  return { data, shape: [batch, steps] };
}

// The task's files for causal_lm_torch.py: the fixture script's config keys, tokens, weights.
function writeTask(name, model, tokens) {
  const c = model.config;
  const config = {
    format: c.format, hidden_size: c.hiddenSize, num_layers: c.numLayers, num_heads: c.numHeads,
    num_kv_heads: c.numKvHeads, positions: c.positions, rotary_base: c.rotaryBase, norm: c.norm,
    norm_eps: c.normEps, mlp: c.intermediateSize ? c.mlp : 'none', tie_embeddings: c.tieEmbeddings, pad: null,
  };
  const weights = model.stateDict();
  const { parameters } = model;
  mkdirSync('build/bench', { recursive: true });
  const base = `build/bench/${name}`;
  writeFileSync(`${base}.json`, JSON.stringify({
    config, batch: tokens.shape[0], steps: tokens.shape[1], lr: STEP.lr, betas: STEP.betas, eps: STEP.eps,
    weight_decay: STEP.weightDecay, clip: STEP.clip, parameters,
  }));
  const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  writeFileSync(`${base}.bin`, Buffer.concat([bytes(tokens.data), ...parameters.map((p) => bytes(weights[p.name].data))]));
  return [`${base}.json`, `${base}.bin`];
}

// 1. The training step, ours and PyTorch's from the same weights and batch, timed in turns.
async function timeTrainingStep({ attn, size, torch, quick }) {
  const model = attn.CausalLM.gpt2({ ...size.config, maxPositions: size.steps, seed: 1 });
  const tokens = tokensOf(size.batch, size.steps + 1, size.config.vocabSize, 7);
  const task = writeTask(`causal-lm-${size.config.hiddenSize}`, model, tokens);
  const ours = {
    name: 'ours: wasm SIMD, 1 thread',
    loss: model.lossAndGradients(tokens).loss,
    sample: async (reps) => {
      const start = performance.now();
      for (let i = 0; i < reps; i++) model.trainStep(tokens, STEP);
      return (performance.now() - start) / reps;
    },
    close: async () => model.dispose(),
  };
  const runners = await startRunners([() => ours, () => torch === true && pytorchServer(TORCH_SCRIPT, task, 1)]);
  const timed = await timeRunners(`CausalLM ${size.label}`, runners, { rounds: quick ? 5 : 7, sampleMs: 300 });
  return runners.map(({ name }, i) => ({ size: size.label, runner: name, ...timed[i] }));
}

// 2. Greedy generation: ours through the caches, ours re-running the model over the prefix, and
// PyTorch with its own cache (HF's DynamicCache, written out in scripts/fixtures/causal_lm.py),
// from the same weights and prompt; every runner's tokens checked equal before any is timed.
async function timeGeneration({ attn, size, torch, quick }) {
  const model = attn.CausalLM.gpt2({ ...size.config, maxPositions: 16 + size.newTokens, seed: 1 });
  const prompt = tokensOf(1, 16, size.config.vocabSize, 11);
  const V = size.config.vocabSize;
  const rerun = () => {
    let tokens = prompt.data;
    for (let t = 0; t < size.newTokens; t++) {
      const { data } = model.forward({ data: tokens, shape: [1, tokens.length] }).logits;
      const row = data.subarray((tokens.length - 1) * V);
      let best = 0;
      for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
      const next = new Int32Array(tokens.length + 1);
      next.set(tokens);
      next[tokens.length] = best;
      tokens = next;
    }
    return tokens;
  };
  const cached = () => model.generate(prompt, { maxNewTokens: size.newTokens, temperature: 0 }).tokens.data;
  const inProcess = (name, generate) => ({
    name,
    tokens: Array.from(generate()),
    sample: async (reps) => {
      const start = performance.now();
      for (let i = 0; i < reps; i++) generate();
      return (performance.now() - start) / reps;
    },
    close: async () => {},
  });
  const task = writeTask(`causal-lm-generate-${size.config.hiddenSize}`, model, prompt);
  const runners = await startRunners([
    () => inProcess('ours: wasm SIMD, 1 thread, KV caches', cached),
    () => inProcess('ours: re-running the prefix', rerun),
    () => torch === true && pytorchServer(TORCH_SCRIPT, task, 1, ['--generate', String(size.newTokens)]),
  ]);
  try {
    const [want, ...rest] = runners.map((r) => r.tokens ?? r.info.tokens);
    for (const [i, got] of rest.entries()) {
      const at = got.findIndex((token, t) => token !== want[t]);
      if (at >= 0 || got.length !== want.length) {
        throw new PeerMismatchError(`CausalLM generation, ${size.label}: ${runners[i + 1].name} gave token ${got[at]} at ${at}, our caches ${want[at]}`);
      }
    }
    const timed = await inTurns(runners, { rounds: quick ? 3 : 5, sampleMs: 100 });
    return { size: size.label, newTokens: size.newTokens, runners: runners.map(({ name }, i) => ({ name, ms: timed[i].ms })) };
  } finally {
    for (const runner of runners) await runner.close();
    model.dispose();
  }
}

async function run({ quick, log, builds }) {
  const { simd } = await builds();
  const sizes = quick ? SIZES.filter((s) => s.label === 'small') : SIZES.filter((s) => s.label !== 'small');
  const { torch } = outsideRunners('CausalLM', log);
  const steps = [], generation = [], goals = [];
  for (const size of sizes) {
    steps.push(...await timeTrainingStep({ attn: simd, size, torch, quick }));
    const ours = steps.find((r) => r.size === size.label && r.runner.startsWith('ours'));
    const theirs = steps.find((r) => r.size === size.label && r.runner.startsWith('PyTorch'));
    goals.push(measured('causalLMVsPyTorch', size.label, theirs && theirs.ms / ours.ms, theirs
      ? `ours ${ours.ms.toFixed(1)} ms, PyTorch ${theirs.ms.toFixed(1)} ms` : `PyTorch not measured (${torch})`));
    const g = await timeGeneration({ attn: simd, size, torch, quick });
    generation.push(g);
    const [cached, rerun, theirsGenerating] = g.runners;
    goals.push(measured('causalLMCachedGeneration', `${g.newTokens} tokens, ${size.label}`, rerun.ms / cached.ms,
      `cached ${cached.ms.toFixed(0)} ms, re-running the prefix ${rerun.ms.toFixed(0)} ms`));
    const perSecond = (r) => (1000 * g.newTokens / r.ms).toFixed(0);
    goals.push(measured('causalLMGenerationVsPyTorch', size.label, theirsGenerating && theirsGenerating.ms / cached.ms, theirsGenerating
      ? `tokens per second: ours ${perSecond(cached)}, PyTorch ${perSecond(theirsGenerating)}` : `PyTorch not measured (${torch})`));
  }
  const tables = [
    { title: 'CausalLM training step (ms, median of samples taken in turns)', header: ['size', 'runner', 'ms'], rows: steps.map((r) => [r.size, r.runner, r.ms.toFixed(2)]) },
    {
      title: 'CausalLM greedy generation (ms per call, median of samples taken in turns)',
      header: ['size', 'new tokens', 'runner', 'ms', 'tokens/s'],
      rows: generation.flatMap((g) => g.runners.map((r) => [g.size, g.newTokens, r.name, r.ms.toFixed(1), (1000 * g.newTokens / r.ms).toFixed(0)])),
    },
  ];
  return { results: { steps, generation }, tables, goals };
}

const section = { name: 'causalLM', run };
export default section;

await runAlone(import.meta, section);
