// The comparison by source length: fresh models of the kinds the section names, from one seed,
// trained side by side on the same batches (SideBySide) for the same number of epochs, then
// scored on the held-out pairs of the long-sentence task (COMPARE_TASK), where sources reach 30
// tokens.

import { SideBySide } from '../../../shared/translation/side-by-side.js';
import { SLICE_MS } from './training-loop.js';
import { yieldToMessages } from '../../workers/yield-to-messages.js';

/** The task the comparison trains on (tasks.js). */
export const COMPARE_TASK = 'fra-eng-long';

/**
 * Trains models of `kinds` (keys of MODELS) in slices, calling onProgress(epoch) after each and
 * yielding to the worker's messages; SideBySide.evaluate()'s { kind: results } once `epochs` are
 * done, or null when cancelled() turned true meanwhile.
 */
export async function trainSideBySide(attn, data, { kinds, seed, epochs, onProgress, cancelled }) {
  const models = new SideBySide(attn, data, { kinds, seed });
  try {
    while (models.epoch < epochs) {
      const t0 = performance.now();
      while (performance.now() - t0 < SLICE_MS && models.epoch < epochs) models.step();
      onProgress(models.progress);
      await yieldToMessages();
      if (cancelled()) return null;
    }
    return models.evaluate();
  } finally {
    models.dispose();
  }
}
