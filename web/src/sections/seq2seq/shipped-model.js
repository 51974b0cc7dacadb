// The models that ship with the page (trained by scripts/train-page-model.js, served from
// web/public/models/), one per shipped kind (MODELS[kind].shipped) and task: its weights
// (safetensors under d2l's names) and its JSON (kind, vocabularies, model and training settings,
// steps) turned into a Trainer ready to translate.

import { readSafetensors } from 'attention-wasm';
import { MODELS, Trainer, shippedModelName } from '../../../shared/translation/trainer.js';

const sameTokens = (a, b) => a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * The shipped model of `kind` for `task` and the prepared `data`, loaded from `modelBase`; null
 * when the page ships none of that kind (nothing is fetched then, so no 404 is logged) or the
 * files are missing. Throws when its vocabularies are not the ones `data` was built with, or the
 * files hold another kind.
 */
export async function loadShippedModel(attn, data, { task, kind, modelBase }) {
  if (!MODELS[kind]?.shipped) return null;
  const base = `${modelBase}${shippedModelName(kind, task)}`;
  const [weights, meta] = await Promise.all([
    fetch(`${base}.safetensors`).then((r) => (r.ok ? r.arrayBuffer() : null)),
    fetch(`${base}.json`).then((r) => (r.ok ? r.json() : null)),
  ]);
  if (!weights || !meta) return null;
  if (meta.kind !== kind) throw new Error(`${base}.json holds a ${meta.kind} model, not ${kind}`);
  // The shipped vocabularies must be the ones this page builds, or its token ids mean nothing.
  if (!sameTokens(meta.srcVocab, data.srcVocab.toJSON()) || !sameTokens(meta.tgtVocab, data.tgtVocab.toJSON())) {
    throw new Error(`the shipped ${kind} model for ${task} was trained on other vocabularies: rerun scripts/train-page-model.js`);
  }
  const shipped = new Trainer(attn, data, { seed: meta.seed, kind, model: meta.model, training: meta.training });
  shipped.model.loadStateDict(readSafetensors(weights));
  shipped.steps = meta.steps;
  shipped.epoch = meta.epochs;
  return shipped;
}
