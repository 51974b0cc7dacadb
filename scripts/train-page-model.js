// Trains the models that ship with the page's seq2seq sections (5, Bahdanau's, and 6, the
// Transformer's) and writes them to web/public/models/ (Vite serves web/public/ as is):
// <kind>-<task>.safetensors (the state dict under d2l's names) and <kind>-<task>.json (the kind,
// the vocabularies, the model and training settings, the steps, and the held-out BLEU it reached).
// The page loads the file of the kind and task on show (web/src/sections/seq2seq/shipped-model.js)
// for every kind marked `shipped` in MODELS.
//
// Run after scripts/build-wasm.sh, from the repository root:
//   node scripts/train-page-model.js                      # Bahdanau, both tasks, default settings
//   node scripts/train-page-model.js --kind transformer   # d2l's Transformer (MODELS.transformer)
//   node scripts/train-page-model.js --task dates         # one task
//   node scripts/train-page-model.js --dry-run            # train and report, write nothing
//
// Deterministic: a fixed data seed (tasks.js), model seed 0 and a fixed number of epochs, and the
// scalar wasm build (no SIMD reassociation differences between machines), so a rerun writes the
// same bytes. It uses the modules the page's training worker uses (web/shared/translation/), so
// the vocabularies and the model's settings are the page's.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadAttention, writeSafetensors } from '../dist/index.js';
import { prepareTask, taskNames } from '../web/shared/translation/tasks.js';
import { EPOCHS, MODELS, Trainer, modelNames, shippedModelName } from '../web/shared/translation/trainer.js';

const OUT = new URL('../web/public/models/', import.meta.url);

const { values } = parseArgs({
  options: {
    kind: { type: 'string', default: 'bahdanau' },
    task: { type: 'string' },
    epochs: { type: 'string', default: String(EPOCHS) },
    seed: { type: 'string', default: '0' },
    'dry-run': { type: 'boolean', default: false },
    simd: { type: 'boolean', default: false },
  },
});

const { kind } = values;
if (!MODELS[kind]?.shipped) {
  const shippable = modelNames.filter((name) => MODELS[name].shipped);
  throw new RangeError(`--kind: expected one of the shipped kinds ${shippable.join(', ')}, given ${kind}`);
}
const attn = await loadAttention({ simd: values.simd });
const epochs = Number(values.epochs);
const seed = Number(values.seed);

for (const task of values.task ? [values.task] : taskNames) {
  const data = prepareTask(task);
  const trainer = new Trainer(attn, data, { seed, kind });
  const t0 = performance.now();
  let nextReport = 1;
  while (trainer.epoch < epochs) {
    trainer.trainStep();
    if (trainer.epoch >= nextReport) {
      const { bleu, exact } = trainer.evaluate();
      const seconds = (performance.now() - t0) / 1000;
      console.log(`${kind} ${task}: epoch ${trainer.epoch}, step ${trainer.steps}, ${seconds.toFixed(1)} s, held-out BLEU ${bleu.toFixed(3)}, exact ${(100 * exact).toFixed(1)}%`);
      nextReport += 1;
    }
  }
  const result = trainer.evaluate();
  const { model, training } = MODELS[kind];
  const meta = {
    kind, task, seed, epochs, steps: trainer.steps, model, training,
    heldOutBleu: Number(result.bleu.toFixed(4)), heldOutExact: Number(result.exact.toFixed(4)),
    srcVocab: data.srcVocab.toJSON(), tgtVocab: data.tgtVocab.toJSON(),
  };
  if (!values['dry-run']) {
    const name = shippedModelName(kind, task);
    const bytes = writeSafetensors(trainer.model.stateDict(), { metadata: { task, format: 'pt', source: 'scripts/train-page-model.js' } });
    await writeFile(new URL(`${name}.safetensors`, OUT), bytes);
    await writeFile(new URL(`${name}.json`, OUT), `${JSON.stringify(meta)}\n`);
    console.log(`${kind} ${task}: wrote ${name}.safetensors (${(bytes.length / 1024).toFixed(0)} KiB) and its .json`);
  }
  trainer.dispose();
}
