// 7. In-context learning: induction heads. A 2-layer attention-only CausalLM (task.js) trained
// in a worker of the section's own (train-worker.js): the held-out loss on first and repeated
// occurrences with the phase change marked, every head's previous-token and prefix-matching
// scores over training, every head on the probe (a click ablates it), what removing each head
// does, and the model continuing a sequence of the visitor's by copying (continuation.js). The
// shipped model (scripts/train-induction-model.js) and its run's curves show before anyone trains.

import { button, controlBar, select } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { whenNear } from '../../ui/when-near.js';
import { watchedWorker } from '../../workers/watched-worker.js';
import { TEXT } from './explanation.js';
import { ablationPlot, headMaps, lossPlot, scoresPlot } from './plots.js';
import { continuationPart, textOf } from './continuation.js';
import { MAX_STEPS, probeBatch } from './task.js';

const HEADS = 4; // MODEL.numLayers * MODEL.numHeads
const SEEDS = [1, 2, 3, 4, 5];

// The probe's first row, as the maps' tips name its tokens.
const probe = probeBatch();
const probeText = [...textOf(Array.from(probe.data.subarray(0, probe.shape[1])))];

export function mountInduction(root) {
  const state = urlState('ih', { seed: 3, mask: '1'.repeat(HEADS), prompt: 'Xq7bK2mXq7', temp: 0, topk: 0 }, root.id);
  const section = scaffold(root, { number: 7, title: 'In-context learning: induction heads', state });
  const { values } = state;
  if (!/^[01]{4}$/.test(values.mask)) values.mask = '1'.repeat(HEADS);
  root.dataset.trainState = 'loading';
  let report = null;

  const send = (message) => worker.postMessage(message);
  const mask = () => [...values.mask].map(Number);
  const buttons = {
    start: button({ name: 'start', label: 'Train from scratch', onClick: () => send({ type: 'start', seed: values.seed }) }),
    pause: button({
      name: 'pause', label: 'Pause',
      onClick: () => send({ type: root.dataset.trainState === 'paused' ? 'resume' : 'pause' }),
    }),
    reset: button({ name: 'reset', label: 'Shipped model', title: 'Back to the model that loads with the page', onClick: () => send({ type: 'reset' }) }),
  };
  const seed = select({
    name: 'seed', label: 'seed', options: SEEDS.map((s) => [String(s), String(s)]), value: String(values.seed),
    onChange: (v) => section.set({ seed: Number(v) }),
  });
  const status = document.createElement('p');
  status.className = 'readout train-stats';
  status.setAttribute('aria-live', 'polite');

  const lossCard = card('Held-out loss: first occurrences and repeated tokens', { name: 'ih-loss' });
  const scoresCard = card('Every head’s scores over training', { name: 'ih-scores' });
  const headsCard = card('Every head on the probe (12 random tokens, repeated): queries down, keys across; click to ablate', { name: 'ih-heads', wide: true });
  const ablationCard = card('Removing heads: each alone, then all of layer 0', { name: 'ih-ablation', wide: true });

  const continuation = continuationPart({
    values, section, send, ready: () => report !== null && report.source !== 'none',
  });

  section.append(
    prose(TEXT),
    controlBar(buttons.start, buttons.pause, buttons.reset, seed),
    status,
    plotGrid(lossCard, scoresCard),
    plotGrid(headsCard),
    plotGrid(ablationCard),
    ...continuation.nodes,
  );

  const worker = watchedWorker(
    () => new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module', name: 'induction-training' }),
    {
      onMessage,
      onError: (message) => {
        status.textContent = `The training worker failed: ${message}`;
        root.dataset.trainState = 'error';
      },
      startWhen: (start) => whenNear(root, start),
    },
  );
  send({ type: 'init', modelBase: new URL('models/', document.baseURI).href });
  send({ type: 'mask', mask: mask() });

  function toggleHead(k) {
    const next = mask();
    next[k] = 1 - next[k];
    section.set({ mask: next.join('') });
    send({ type: 'mask', mask: next });
  }

  function onMessage(m) {
    if (m.type === 'error') {
      status.textContent = `Error: ${m.message}`;
      console.warn(m.message);
      return;
    }
    if (m.type === 'generation') {
      continuation.show(m);
      return;
    }
    const first = report === null;
    report = m;
    root.dataset.trainState = m.state;
    root.dataset.source = m.source;
    root.dataset.steps = String(m.steps ?? 0);
    root.dataset.phaseStep = m.phase ? String(m.phase.step) : '';
    root.dataset.phaseSeconds = m.phase ? String(m.phase.seconds) : '';
    buttons.pause.element.disabled = m.state !== 'training' && m.state !== 'paused';
    buttons.pause.element.textContent = m.state === 'paused' ? 'Resume' : 'Pause';
    buttons.reset.element.disabled = m.source !== 'trained';
    if (first || m.state !== 'training') continuation.request();
    for (const name of Object.keys(parts)) schedule(name);
  }

  const statusLine = () => {
    if (!report) return 'Loading the model…';
    if (report.source === 'none') return 'No shipped model was found: “Train from scratch” trains one.';
    const last = report.history.at(-1);
    const who = report.source === 'shipped' ? 'The shipped model' : `Seed ${report.seed}`;
    const phase = report.phase
      ? `phase change at step ${report.phase.step} (${report.phase.seconds.toFixed(1)} s of training)`
      : 'no phase change yet';
    const figures = last ? ` · repeated tokens: loss ${last.repeatedLoss.toFixed(2)}, accuracy ${(100 * last.repeatedAccuracy).toFixed(0)}%` : '';
    const masked = report.masked ? ` · with the ablated heads: loss ${report.masked.repeatedLoss.toFixed(2)}, accuracy ${(100 * report.masked.repeatedAccuracy).toFixed(0)}%` : '';
    const where = report.state === 'training' ? `training, step ${report.steps} of ${MAX_STEPS}` : `${report.state}, ${report.steps} steps`;
    return `${who}: ${where} · ${phase}${figures}${masked}.`;
  };

  const parts = {
    status: () => {
      status.textContent = statusLine();
    },
    curves: () => {
      const history = report?.history ?? [];
      lossCard.body.replaceChildren(lossPlot(history, report?.phase, widthOf(lossCard.body, { max: 560 })));
      scoresCard.body.replaceChildren(scoresPlot(history, report?.phase, widthOf(scoresCard.body, { max: 560 })));
    },
    heads: () => {
      if (!report?.maps) return;
      const scores = report.masked ?? report.history.at(-1);
      headsCard.body.replaceChildren(headMaps({
        maps: report.maps, probe: probeText, scores, mask: mask(), width: widthOf(headsCard.body), onToggle: toggleHead,
      }));
    },
    ablation: () => {
      ablationCard.body.replaceChildren(ablationPlot(report?.ablation, report?.history?.at(-1), widthOf(ablationCard.body)));
    },
  };
  const schedule = (name) => section.meter.schedule(() => null, parts[name], name);

  return {
    render: () => {
      for (const name of Object.keys(parts)) schedule(name);
    },
  };
}
