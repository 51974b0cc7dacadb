// Section 7's experiment (web/src/sections/induction/task.js) without a page, in the three
// builds: a 2-layer attention-only CausalLM trained on random tokens that end in a segment and
// its repeat forms an induction head (Olsson et al. 2022): a layer-1 head attends from a
// repeated token to the token after its earlier occurrence (prefix-matching score >= 0.5), and
// the model predicts the repeated tokens (accuracy >= 0.9), while the first occurrences stay as
// unpredictable as random tokens. Then ablating the layer-0 head the layer-1 head reads through
// (headMask) breaks the circuit.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import { importRepo } from './repo-module.js';

const task = await importRepo('web/src/sections/induction/task.js');

const SEED = 2;
const MAX_STEPS = 2500; // the phase change came at 700-1100 steps in the calibration's seeds
const best = (scores) => Math.max(...scores);

for (const attn of backends) {
  describe(`the induction experiment (${labelOf(attn)})`, () => {
    let run;
    let last;
    // Measured every 100 steps until the criteria hold (or MAX_STEPS).
    before(() => {
      run = new task.InductionRun(attn, SEED);
      while (run.steps < MAX_STEPS) {
        for (let i = 0; i < 100; i++) run.step();
        last = run.measure(0).measurement;
        if (last.repeatedAccuracy >= 0.9 && best(last.prefixMatching[1]) >= 0.5) break;
      }
    });

    test('a layer-1 head matches prefixes and the repeats are predicted; first occurrences are not', () => {
      assert.ok(best(last.prefixMatching[1]) >= 0.5, `layer-1 prefix matching ${last.prefixMatching[1]} after ${run.steps} steps`);
      assert.ok(last.repeatedAccuracy >= 0.9, `accuracy on repeated tokens ${last.repeatedAccuracy} after ${run.steps} steps`);
      // ln 64 = 4.16 nats: nothing predicts a random token.
      assert.ok(last.firstLoss > 3.5, `loss on first occurrences ${last.firstLoss}`);
      const change = task.phaseChange(run.history);
      assert.ok(change && change.step <= run.steps, 'the phase change is in the history');
      // Before it, the repeats were as unpredictable as the first occurrences.
      assert.ok(run.history[0].repeatedLoss > 3.5, `repeated loss at step 100: ${run.history[0].repeatedLoss}`);
    });

    test('layer 0 has a previous-token head, and the layer-1 head needs the previous-token heads', () => {
      const previous = last.previousToken[0];
      assert.ok(best(previous) >= 0.5, `layer-0 previous-token scores ${previous}`);
      const { numLayers, numHeads } = run.model.config;
      const mask = new Float32Array(numLayers * numHeads).fill(1);
      previous.forEach((score, h) => { if (score >= 0.5) mask[h] = 0; });
      const ablated = task.headScores(run.model, run.probe, mask);
      assert.ok(best(ablated.prefixMatching[1]) < 0.5 * best(last.prefixMatching[1]),
        `layer-1 prefix matching ${ablated.prefixMatching[1]} with layer 0's previous-token heads ablated, ${last.prefixMatching[1]} without`);
    });
  });
}
