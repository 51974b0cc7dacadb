// Models of several kinds (MODELS, trainer.js) trained side by side on one task from one seed,
// one step each in turn, so that what differs between them is the model alone. A Trainer draws
// its batches from (seed, epoch, batch size) and nothing of its kind, so the same seed gives
// every kind the same batches in the same order, provided their batch sizes agree: the
// constructor refuses kinds whose batch sizes differ. No DOM and no worker API: the page's
// comparison (web/src/sections/seq2seq/attention-comparison.js) slices and reports around it.

import { MODELS, Trainer } from './trainer.js';

export class SideBySide {
  /** attn: a loaded package; data: prepareTask's result; kinds: keys of MODELS, in turn order. */
  constructor(attn, data, { kinds, seed = 0 }) {
    const sizes = kinds.map((kind) => MODELS[kind]?.training.batchSize);
    if (new Set(sizes).size !== 1) {
      throw new RangeError(`kinds: expected one batch size for ${kinds.join(', ')}, given ${sizes.join(', ')}`);
    }
    this.trainers = [];
    try {
      for (const kind of kinds) this.trainers.push(new Trainer(attn, data, { seed, kind }));
    } catch (error) {
      this.dispose();
      throw error;
    }
  }

  /** Whole epochs done (every model has done as many steps: the same for all). */
  get epoch() {
    return this.trainers[0].epoch;
  }

  /** Fractional epochs done. */
  get progress() {
    return this.trainers[0].progress;
  }

  /** One training step of each model, in turn, on the same batch. */
  step() {
    for (const t of this.trainers) t.trainStep();
  }

  /** { kind: { attention, steps, bleu, exact, byLength, long } } (Trainer.evaluate), in turn order. */
  evaluate() {
    return Object.fromEntries(this.trainers.map((t) => [t.kind, { attention: t.attention, steps: t.steps, ...t.evaluate() }]));
  }

  dispose() {
    for (const t of this.trainers) t.dispose();
  }
}
