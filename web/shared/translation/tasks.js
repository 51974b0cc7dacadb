// The seq2seq sections' tasks and their fixed data: English -> French (fra-eng.js), the same in
// long sentences (fra-eng-long.js), and dates -> ISO (dates.js). The corpus is generated from a fixed seed, so the vocabularies are the
// same in every browser, in the worker and in scripts/train-page-model.js: the shipped model's
// token ids mean the same thing everywhere. The page's "seed" control seeds the model's initial
// weights and the batch order, not the data.

import { buildDataset } from './arrays.js';
import { tokenizeDate, generateDates } from './dates.js';
import { D2L_EXAMPLES, PROBE, generateFraEng } from './fra-eng.js';
import { generateFraEngLong } from './fra-eng-long.js';
import { splitPairs } from './split.js';
import { preprocess } from './text.js';

export const DATA_SEED = 0;

/**
 * name -> { label, size, numSteps (d2l's num_steps: the longest source and target fit with
 * their '<eos>'), probe (a source sentence, as a visitor would type it), prepare(text) -> the
 * source as the corpus spells it, examples: sources to try }.
 */
export const TASKS = {
  'fra-eng': {
    label: 'English → French',
    size: 2000,
    numSteps: 10,
    probe: PROBE.src,
    prepare: preprocess,
    pairs: (size) => generateFraEng({ seed: DATA_SEED, size }),
    keepInTrain: D2L_EXAMPLES.map((p) => p.tgt),
    examples: [...D2L_EXAMPLES.map((p) => p.src), 'the women take a red boat .'],
  },
  'fra-eng-long': {
    label: 'English → French, long sentences',
    size: 3000,
    numSteps: 32,
    probe: 'she likes the black cats and we go to the park .',
    prepare: preprocess,
    pairs: (size) => generateFraEngLong({ seed: DATA_SEED, size }),
    keepInTrain: [],
    examples: ['the women take a red boat and he is tired and we go to the park .'],
  },
  dates: {
    label: 'dates → ISO 8601',
    size: 2000,
    numSteps: 12,
    probe: '22 nov 2026',
    prepare: tokenizeDate,
    pairs: (size) => generateDates({ seed: DATA_SEED, size }),
    keepInTrain: [],
    examples: ['november 22, 2026', '11/22/26', 'the 3rd of may 1999'],
  },
};

export const taskNames = Object.keys(TASKS);

export function taskSpec(name) {
  const spec = TASKS[name];
  if (!spec) throw new RangeError(`task: expected one of ${taskNames.join(', ')}, given ${name}`);
  return spec;
}

/**
 * The task's corpus split 90/10 and built into arrays (vocabularies from the training pairs):
 * { name, numSteps, train, heldOut (arrays), heldOutPairs, srcVocab, tgtVocab }.
 */
export function prepareTask(name) {
  const spec = taskSpec(name);
  const split = splitPairs(spec.pairs(spec.size), { heldOutFraction: 0.1, keepInTrain: spec.keepInTrain });
  const dataset = buildDataset(split, { numSteps: spec.numSteps });
  return { name, numSteps: spec.numSteps, heldOutPairs: split.heldOut, ...dataset };
}
