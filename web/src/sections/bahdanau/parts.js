// The parts of the section that redraw as the worker reports, each from the current view
// (compute.js) with the plots of plots.js: the progress and stats lines, the loss and BLEU
// curves, the probe's alignment (and a Transformer's every head on it), the visitor's translation
// and the comparison.

import { widthOf } from '../../ui/plot.js';
import { EPOCHS, MODELS } from '../../../shared/translation/trainer.js';
import { compareLine, pastRunsBeside, progressLine, statsLine } from './compute.js';
import { alignmentPlot, bleuPlot, headsPlot, lengthPlot, lossPlot, translationLines } from './plots.js';
import { bumpCount } from './worker-messages.js';

/** name -> draw(), reading current.view and dataset.trainState, drawing into `elements`. */
export function sectionParts(current, dataset, elements) {
  const { training, stats, lossCard, bleuCard, probeCard, probeLine, translation, translateCard, headsCard, compareText, compareCard } = elements;
  return {
    stats: () => {
      training.progress.value = Math.min(EPOCHS, current.view.last?.epoch ?? 0);
      training.progressText.textContent = progressLine(dataset.trainState, current.view);
      stats.textContent = statsLine(current.view);
    },
    curves: () => {
      lossCard.body.replaceChildren(lossPlot(current.view.losses, widthOf(lossCard.body, { max: 560 })));
      const run = { label: `${MODELS[current.view.kind]?.label ?? 'this model'}, this run`, points: current.view.bleus };
      bleuCard.body.replaceChildren(bleuPlot(run, pastRunsBeside(current), widthOf(bleuCard.body, { max: 560 })));
    },
    probe: () => {
      const { probe } = current.view;
      if (!probe) return;
      probeLine.textContent = `${probe.source.join(' ')}  →  ${probe.output.join(' ')}`;
      probeCard.body.replaceChildren(alignmentPlot(probe, widthOf(probeCard.body, { max: 520 })));
      headsCard.body.replaceChildren(headsPlot(probe, widthOf(headsCard.body, { max: 900 })));
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
      compareCard.body.replaceChildren(lengthPlot(compare.results, widthOf(compareCard.body, { max: 900 })));
    },
  };
}
