// The model that ships with the page (trained by scripts/train-page-model.js, served from
// web/public/models/): its weights (safetensors under d2l's names) and its JSON (vocabularies,
// model and training settings, steps) turned into a Trainer ready to translate.

import { readSafetensors } from 'attention-wasm';
import { Trainer } from '../../../shared/translation/trainer.js';

const sameTokens = (a, b) => a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * The shipped model of `task` for the prepared `data`, loaded from `modelBase`; null when the
 * page has none for the task. Throws when its vocabularies are not the ones `data` was built with.
 */
export async function loadShippedModel(attn, data, { task, modelBase }) {
  const base = `${modelBase}bahdanau-${task}`;
  const [weights, meta] = await Promise.all([
    fetch(`${base}.safetensors`).then((r) => (r.ok ? r.arrayBuffer() : null)),
    fetch(`${base}.json`).then((r) => (r.ok ? r.json() : null)),
  ]);
  if (!weights || !meta) return null;
  // The shipped vocabularies must be the ones this page builds, or its token ids mean nothing.
  if (!sameTokens(meta.srcVocab, data.srcVocab.toJSON()) || !sameTokens(meta.tgtVocab, data.tgtVocab.toJSON())) {
    throw new Error(`the shipped model for ${task} was trained on other vocabularies: rerun scripts/train-page-model.js`);
  }
  const shipped = new Trainer(attn, data, { seed: meta.seed, kind: 'bahdanau', model: meta.model, training: meta.training });
  shipped.model.loadStateDict(readSafetensors(weights));
  shipped.steps = meta.steps;
  shipped.epoch = meta.epochs;
  return shipped;
}
