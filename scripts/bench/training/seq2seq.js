// The Seq2Seq section of `npm run bench`: one training step (forward, backward, gradient
// clipping, Adam) of d2l's GRU encoder-decoder with Bahdanau attention, at d2l's configuration
// (batch 128, embed 256, hidden 256, 2 layers, 9 steps, vocabularies of 200) and at a small one
// (batch 64, embed 32, hidden 64, 2 layers, 10 steps; alone in --quick): our SIMD and scalar wasm
// builds, our native build, and PyTorch on the CPU with one thread (d2l's model, seq2seq_torch.py
// beside this file) when /usr/bin/python3 can import torch. Every runner starts from the same
// weights and batch, and its loss there must equal ours before it is timed. Dropout is 0 for all
// of them (d2l trains with 0.2; its masks would make the losses differ). The machinery (servers,
// turns, task files) is training.js's, shared with the other training sections.
import { fileURLToPath } from 'node:url';
import { measured } from '../goals.js';
import { cpuName } from '../shared/machine.js';
import { runAlone } from '../shared/standalone.js';
import { PAD, batchOf, ours, outsideRunners, pytorchServer, server, startRunners, stepTable, timeRunners, writeTask } from './training.js';

const STEP = { pad: PAD, lr: 0.005, clip: 1 }; // d2l's lr and gradient_clip_val
const SIMD = 'ours: wasm SIMD';
const TORCH_SCRIPT = fileURLToPath(new URL('./seq2seq_torch.py', import.meta.url));

export const SIZES = [
  { label: "d2l's size", batch: 128, steps: 9, config: { srcVocabSize: 200, tgtVocabSize: 200, embedSize: 256, numHiddens: 256, numLayers: 2 } },
  { label: 'small', batch: 64, steps: 10, config: { srcVocabSize: 200, tgtVocabSize: 200, embedSize: 32, numHiddens: 64, numLayers: 2 } },
];

// Every runner at one size, in turns: [{ size, ...config, batch, steps, runner, ms }].
async function timeSize({ simd, scalar, size, native, torch, quick }) {
  const batch = batchOf(size.batch, size.steps, size.config.srcVocabSize, 7);
  const model = (attn) => new attn.Seq2SeqAttention({ ...size.config, seed: 1 });
  const first = ours(SIMD, model(simd), batch, STEP); // dropout 0: its loss is the plain loss
  const weights = first.model.stateDict();
  const task = writeTask(`seq2seq-${size.config.embedSize}-${size.config.numHiddens}`, {
    config: { ...size.config, dropout: 0, attention: true }, batch: size.batch, srcSteps: size.steps,
    tgtSteps: size.steps, ...STEP,
  }, batch, first.model.parameters, weights);
  const runners = await startRunners([
    () => first,
    () => ours('ours: wasm scalar', model(scalar).loadStateDict(weights), batch, STEP),
    () => native && server('ours: native (g++ -march=native)', native, ['seq2seq', ...task]),
    () => torch === true && pytorchServer(TORCH_SCRIPT, task),
  ]);
  const ms = await timeRunners(`Seq2Seq ${size.label}`, runners, { rounds: quick ? 5 : 7, sampleMs: 200 });
  return runners.map(({ name }, i) => ({ size: size.label, ...size.config, batch: size.batch, steps: size.steps, runner: name, ms: ms[i].ms }));
}

async function run({ quick, log, builds }) {
  const { simd, scalar } = await builds();
  const sizes = quick ? SIZES.filter((s) => s.label === 'small') : SIZES;
  const { torch, native } = outsideRunners('Seq2Seq', log);
  const results = [], goals = [];
  for (const size of sizes) {
    const rows = await timeSize({ simd, scalar, size, native, torch, quick });
    results.push(...rows);
    const mine = rows.find((r) => r.runner === SIMD), pytorch = rows.find((r) => r.runner.startsWith('PyTorch'));
    goals.push(measured('seq2seqVsPyTorch', size.label, pytorch && pytorch.ms / mine.ms, pytorch
      ? `ours ${mine.ms.toFixed(2)} ms, PyTorch ${pytorch.ms.toFixed(2)} ms` : `PyTorch not measured (${torch})`));
  }
  const title = 'Seq2Seq (d2l\'s GRU encoder-decoder with Bahdanau attention): ms per training step ' +
    `(forward, backward, clip, Adam), dropout 0, medians of samples in turns, on ${cpuName()}; ÷ ours = time ÷ our SIMD build's`;
  const table = stepTable(results, sizes, SIMD, ({ label, batch, steps, config: c }) =>
    `${label} (B ${batch}, E ${c.embedSize}, H ${c.numHiddens}, ${c.numLayers} layers, T ${steps})`);
  return { results, tables: [{ title, ...table }], goals };
}

const section = { name: 'seq2seq', run };
export default section;

await runAlone(import.meta, section);
