// With vs without attention: two fresh models with the same seed (so the same batches), trained
// one step each in turn for the same number of epochs, then scored on the held-out pairs of the
// long-sentence task (COMPARE_TASK), where sources reach 30 tokens.

import { Trainer } from '../../../shared/translation/trainer.js';
import { SLICE_MS } from './training-loop.js';
import { yieldToMessages } from './yield-to-messages.js';

/** The task the comparison trains on (tasks.js). */
export const COMPARE_TASK = 'fra-eng-long';

/**
 * Trains the pair in slices, calling onProgress(epoch) after each and yielding to the worker's
 * messages; [{ attention, steps, bleu, exact, byLength }] for both once `epochs` are done, or
 * null when cancelled() turned true meanwhile.
 */
export async function trainWithAndWithout(attn, data, { seed, epochs, onProgress, cancelled }) {
  const pair = ['bahdanau', 'plain'].map((kind) => new Trainer(attn, data, { seed, kind }));
  try {
    while (pair[0].epoch < epochs) {
      const t0 = performance.now();
      while (performance.now() - t0 < SLICE_MS && pair[0].epoch < epochs) for (const t of pair) t.trainStep();
      onProgress(pair[0].progress);
      await yieldToMessages();
      if (cancelled()) return null;
    }
    return pair.map((t) => ({ attention: t.attention, steps: t.steps, ...t.evaluate() }));
  } finally {
    pair.forEach((t) => t.dispose());
  }
}
