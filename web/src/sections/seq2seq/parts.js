// The parts of a seq2seq section that redraw as its worker reports, each from the current view
// (compute.js) with the plots of plots.js: the progress and stats lines, the loss and BLEU
// curves (the last runs of other models beside this one's, from the page's run log), the probe's
// alignment (and a Transformer's every head on it, where the section has that card), the
// visitor's translation and the comparison (where the section has it).

import { widthOf } from '../../ui/plot.js';
import { EPOCHS, MODELS } from '../../../shared/translation/trainer.js';
import { compareCaption, compareLine, missingRunsLine, progressLine, statsLine } from './compute.js';
import { alignmentPlot, bleuPlot, headsPlot, lengthPlot, lossPlot, plotNote, translationLines } from './plots.js';
import { bumpCount, curvePoint } from './worker-messages.js';

/**
 * name -> draw(), reading current.view and dataset.trainState, drawing into `elements`;
 * `beside` ({ kinds, hint }) names the models whose last run the BLEU chart draws beside the
 * view's and where to train one. A part whose card the section lacks (headsCard, compareCard)
 * is left out.
 */
export function sectionParts(current, dataset, elements, beside) {
  const { training, stats, lossCard, bleuCard, probeCard, probeLine, translation, translateCard, headsCard, compareText, compareCard } = elements;
  const parts = {
    stats: () => {
      training.progress.value = Math.min(EPOCHS, current.view.last?.epoch ?? 0);
      training.progressText.textContent = progressLine(dataset.trainState, current.view);
      stats.textContent = statsLine(current.view);
    },
    curves: () => {
      const { view, runs } = current;
      lossCard.body.replaceChildren(lossPlot(view.losses, widthOf(lossCard.body, { max: 560 })));
      const run = { label: `${MODELS[view.kind]?.label ?? 'this model'}, this run`, points: view.bleus };
      const past = runs.beside(view, beside.kinds);
      // For the browser tests: { kind: [[seconds, bleu, steps], …] } of the curves drawn beside.
      dataset.pastRuns = JSON.stringify(Object.fromEntries(past.map(({ kind, points }) => [kind, points.map(curvePoint)])));
      const missing = missingRunsLine(runs.missing(view, beside.kinds), beside.hint);
      bleuCard.body.replaceChildren(bleuPlot(run, past, widthOf(bleuCard.body, { max: 560 })), ...(missing ? [plotNote(missing, 'missing-runs')] : []));
    },
    probe: () => {
      const { probe } = current.view;
      if (!probe) return;
      probeLine.textContent = `${probe.source.join(' ')}  →  ${probe.output.join(' ')}`;
      probeCard.body.replaceChildren(alignmentPlot(probe, widthOf(probeCard.body, { max: 520 })));
      headsCard?.body.replaceChildren(headsPlot(probe, widthOf(headsCard.body, { max: 900 })));
    },
    translation: () => {
      const { translation: result } = current.view;
      if (!result) return;
      translation.replaceChildren(...translationLines(result));
      bumpCount(dataset, 'translations');
      translateCard.body.replaceChildren(alignmentPlot(result, widthOf(translateCard.body, { max: 560 })));
    },
    compare: () => {
      const { compare } = current.view;
      if (!compare) return;
      compareText.textContent = compareLine(compare);
      compareCard.body.replaceChildren(
        lengthPlot(compare.results, widthOf(compareCard.body, { max: 900 })),
        plotNote(compareCaption(compare), 'compare-caption'),
      );
    },
  };
  if (!compareCard) delete parts.compare;
  return parts;
}
