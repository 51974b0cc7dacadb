// 6. Bahdanau attention: learning to align. A GRU encoder-decoder with additive attention
// (the package's Seq2SeqAttention, d2l's model) trains in a Web Worker
// (bahdanau/train-worker.js) on a generated English -> French corpus or on dates; this module
// owns the controls, the URL state and the plots (bahdanau/plots.js) and draws what the worker
// reports. A model trained by scripts/train-page-model.js ships with the page, so translation
// works before any training.

import { button, checkbox, controlBar, progressBar, select, slider, textField } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { alignmentPlot, bleuPlot, lengthPlot, lossPlot, sourceChips } from './plots.js';
import { TASKS, taskNames } from './tasks.js';
import { EPOCHS, MODEL, TRAINING } from './trainer.js';

const TEXT = `
<p>Bahdanau, Cho and Bengio's encoder–decoder reads the source with a GRU, and at every output
step the decoder <em>attends</em>: its previous hidden state $s_{t-1}$ is the query, the encoder's
outputs $h_j$ are keys and values, and additive attention scores them,
$$a(s_{t-1}, h_j) = w_v^\\top \\tanh(W_q s_{t-1} + W_k h_j),$$
$$\\alpha_{tj} = \\operatorname{softmax}_j\\, a(s_{t-1}, h_j),\\qquad c_t = \\textstyle\\sum_j \\alpha_{tj} h_j.$$
The context $c_t$ is fed to the decoder GRU with the previous word's embedding. Nobody tells
the model which source word goes with which output word: the weights $\\alpha_{tj}$ are
<strong>learned</strong> from sentence pairs alone. The heatmap shows them — one row per output
word, one column per source word. Watch the diagonal form, and the swap where French puts the
adjective after the noun (“black cats” → “chats noirs”).</p>
<p>Everything trains here, in your browser, in a Web Worker: ${MODEL.numLayers} GRU layer of
${MODEL.numHiddens} units, embeddings of ${MODEL.embedSize}, Adam (learning rate ${TRAINING.lr},
gradients clipped to norm ${TRAINING.clip}), batches of ${TRAINING.batchSize} pairs, ${EPOCHS}
passes over about 1,800 generated pairs. Held-out BLEU is d2l's ($k = 2$) on pairs the model
never trains on. A model trained the same way ships with the page, so it translates at once;
“Train from scratch” forgets it and learns again from random weights.</p>`;

const COMPARE_TEXT = `
<h3>With vs without attention</h3>
<p>Without attention the decoder gets one fixed vector — the encoder's last state — for the
whole sentence (d2l's plain <code>Seq2SeqDecoder</code>). Bahdanau et al. showed that this
bottleneck hurts most on long sentences. Train both from the same seed on the same batches and
compare held-out BLEU by source length.</p>`;

const fmt = (x, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : '—');

export function mountBahdanau(root) {
  const state = urlState('bd', { task: 'fra-eng', seed: 0, attention: true, cmp: 5 }, root.id);
  const section = scaffold(root, { number: 5, title: 'Bahdanau attention: learning to align', state });
  const { values } = state;
  if (!TASKS[values.task]) values.task = 'fra-eng';
  root.dataset.trainState = 'loading';

  // --- controls -------------------------------------------------------------------------------
  const send = (message) => worker.postMessage(message);
  const task = select({
    name: 'task', label: 'task', value: values.task,
    options: taskNames.map((name) => [name, TASKS[name].label]),
    onChange: (v) => {
      section.set({ task: v });
      resetView();
      sentence.value = TASKS[v].examples[0];
      send({ type: 'config', task: v });
    },
  });
  const seed = slider({
    name: 'seed', label: 'seed (initial weights, batch order)', min: 0, max: 99, step: 1, value: values.seed,
    onInput: (v) => {
      section.set({ seed: v });
      send({ type: 'config', seed: v });
    },
  });
  const attention = checkbox({
    name: 'attention', label: 'attention (off: d2l’s plain decoder)', checked: values.attention,
    onChange: (v) => {
      section.set({ attention: v });
      send({ type: 'config', attention: v });
    },
  });
  const startButton = button({ name: 'start', label: 'Train from scratch', onClick: () => send({ type: 'start' }) });
  startButton.element.classList.add('primary');
  const pauseButton = button({
    name: 'pause', label: 'Pause',
    onClick: () => send({ type: root.dataset.trainState === 'running' ? 'pause' : 'resume' }),
  });
  const resetButton = button({ name: 'reset', label: 'Reset to the shipped model', onClick: () => send({ type: 'reset' }) });
  const buttons = document.createElement('div');
  buttons.className = 'control control-buttons';
  buttons.append(startButton.element, pauseButton.element, resetButton.element);

  const { element: progressBox, text: progressText, bar: progress } = progressBar({ id: `${root.id}-progress-text`, max: EPOCHS });

  const stats = document.createElement('p');
  stats.className = 'readout train-stats';
  stats.setAttribute('aria-live', 'polite');

  const lossCard = card('Training loss (mean over each slice of steps)', { name: 'bd-loss' });
  const bleuCard = card('Held-out BLEU against training time', { name: 'bd-bleu' });
  const probeCard = card('Alignment of the probe sentence (not a training pair)', { name: 'bd-probe' });
  const probeLine = document.createElement('p');
  probeLine.className = 'readout probe-line';
  probeCard.figure.insertBefore(probeLine, probeCard.body);

  const sentence = textField({
    name: 'sentence', label: 'your sentence (greedy translation below)', value: TASKS[values.task].examples[0],
    onInput: () => requestTranslation(),
  });
  const translateCard = card('Its alignment', { name: 'bd-translate' });
  const translation = document.createElement('div');
  translation.className = 'translation';
  translation.setAttribute('aria-live', 'polite');

  const compareEpochs = select({
    name: 'compare-epochs', label: 'epochs each', value: String(values.cmp),
    options: [1, 2, 5, 10, 20].map((n) => [String(n), String(n)]),
    onChange: (v) => section.set({ cmp: Number(v) }),
  });
  const compareButton = button({
    name: 'compare', label: 'Train both', onClick: () => {
      compareText.textContent = 'training with and without attention…';
      send({ type: 'compare', epochs: Number(compareEpochs.value) });
    },
  });
  const compareGroup = document.createElement('div');
  compareGroup.className = 'control control-buttons';
  compareGroup.append(compareButton.element);
  const compareText = document.createElement('p');
  compareText.className = 'readout compare-status';
  compareText.textContent = 'Not run yet.';
  const compareCard = card('Held-out BLEU by source length', { name: 'bd-compare', wide: true });

  section.append(
    prose(TEXT),
    controlBar(task, seed, attention, buttons, progressBox),
    stats,
    plotGrid(lossCard, bleuCard, probeCard),
    controlBar(sentence),
    translation,
    plotGrid(translateCard),
    prose(COMPARE_TEXT),
    controlBar(compareEpochs, compareGroup),
    compareText,
    plotGrid(compareCard),
  );

  // --- what the worker reported ---------------------------------------------------------------
  let view;
  function resetView() {
    view = { run: -1, losses: [], bleus: [], last: null, probe: null, translation: null, compare: view?.compare ?? null, tokensPerSecond: NaN };
  }
  resetView();

  const worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module', name: 'bahdanau-training' });
  worker.addEventListener('error', (event) => {
    event.preventDefault();
    stats.textContent = `The training worker failed: ${event.message}`;
    root.dataset.trainState = 'error';
  });
  worker.addEventListener('message', ({ data }) => onMessage(data));
  send({ type: 'init', task: values.task, seed: values.seed, attention: values.attention, modelBase: new URL('models/', document.baseURI).href });

  let translationId = 0;
  function requestTranslation() {
    translationId += 1;
    send({ type: 'translate', id: translationId, texts: [sentence.value] });
  }

  function onMessage(m) {
    if (m.type === 'error') {
      stats.textContent = `Error: ${m.message}`;
      console.warn(m.message);
      return;
    }
    if (m.run !== view.run && ['state', 'probe', 'eval'].includes(m.type)) {
      // A new model (fresh start, reset, task): its history starts here.
      const compare = view.compare;
      resetView();
      for (const key of ['firstLoss', 'loss', 'bleu', 'bleuSeconds', 'bleuCurve']) delete root.dataset[key];
      view.compare = compare;
      view.run = m.run;
    }
    if (m.type === 'state') {
      root.dataset.trainState = m.state;
      if (m.shipped !== undefined) view.shipped = m.shipped;
      setButtons(m.state);
      if (m.state === 'idle' || m.state === 'done') requestTranslation();
    } else if (m.type === 'progress' && m.run === view.run) {
      view.losses.push({ step: m.steps, loss: m.loss });
      view.tokensPerSecond = m.tokensPerSecond;
      view.last = { ...view.last, steps: m.steps, epoch: m.epoch, seconds: m.seconds, loss: m.loss };
      root.dataset.progressUpdates = String(Number(root.dataset.progressUpdates ?? 0) + 1);
      root.dataset.firstLoss ??= String(m.loss);
      root.dataset.loss = String(m.loss);
      schedule('curves');
    } else if (m.type === 'eval' && m.run === view.run) {
      view.bleus.push({ seconds: m.seconds, bleu: m.bleu, steps: m.steps });
      view.last = { ...view.last, bleu: m.bleu, exact: m.exact, steps: m.steps, epoch: m.epoch };
      root.dataset.bleu = String(m.bleu);
      root.dataset.bleuSeconds = String(m.seconds);
      root.dataset.bleuCurve = JSON.stringify(view.bleus.map((b) => [Number(b.seconds.toFixed(2)), Number(b.bleu.toFixed(4)), b.steps]));
      schedule('curves');
    } else if (m.type === 'probe' && m.run === view.run) {
      view.probe = m.result;
      root.dataset.probeUpdates = String(Number(root.dataset.probeUpdates ?? 0) + 1);
      schedule('probe');
    } else if (m.type === 'translation' && m.id === translationId) {
      view.translation = m.results[0];
      schedule('translation');
    } else if (m.type === 'compare-progress') {
      compareText.textContent = `training with and without attention: epoch ${m.epoch.toFixed(1)} of ${m.epochs}…`;
    } else if (m.type === 'compare') {
      view.compare = m;
      root.dataset.compared = 'true';
      schedule('compare');
    }
    schedule('stats');
  }

  function setButtons(s) {
    const busy = s === 'loading' || s === 'comparing';
    startButton.element.disabled = busy;
    resetButton.element.disabled = busy;
    compareButton.element.disabled = busy;
    pauseButton.element.disabled = !(s === 'running' || s === 'paused');
    pauseButton.element.textContent = s === 'paused' ? 'Resume' : 'Pause';
    pauseButton.element.name = s === 'paused' ? 'resume' : 'pause';
    root.setAttribute('aria-busy', String(s === 'running' || busy));
  }

  // --- drawing --------------------------------------------------------------------------------
  const parts = {
    stats: drawStats,
    curves: () => {
      lossCard.body.replaceChildren(lossPlot(view.losses, widthOf(lossCard.body, { max: 560 })));
      bleuCard.body.replaceChildren(bleuPlot(view.bleus, widthOf(bleuCard.body, { max: 560 })));
    },
    probe: () => {
      if (!view.probe) return;
      probeLine.textContent = `${view.probe.source.join(' ')}  →  ${view.probe.output.join(' ')}`;
      probeCard.body.replaceChildren(alignmentPlot(view.probe, widthOf(probeCard.body, { max: 520 })));
    },
    translation: drawTranslation,
    compare: drawCompare,
  };
  const schedule = (name) => section.meter.schedule(() => null, parts[name], name);

  function drawStats() {
    const s = root.dataset.trainState;
    const last = view.last ?? {};
    const epoch = last.epoch ?? 0;
    progress.value = Math.min(EPOCHS, epoch);
    const what = view.shipped && view.losses.length === 0 ? 'shipped model' : 'this run';
    progressText.textContent = `${s}: epoch ${fmt(epoch, 1)} / ${EPOCHS} · step ${last.steps ?? 0}${last.seconds ? ` · ${last.seconds.toFixed(1)} s` : ''}`;
    const parts2 = [
      `${what}: held-out BLEU ${fmt(last.bleu)}`,
      `exact ${Number.isFinite(last.exact) ? `${(100 * last.exact).toFixed(0)}%` : '—'}`,
      `loss ${fmt(last.loss)}`,
      `${Number.isFinite(view.tokensPerSecond) ? Math.round(view.tokensPerSecond).toLocaleString('en') : '—'} tokens/s`,
    ];
    stats.textContent = parts2.join(' · ');
  }

  function drawTranslation() {
    const t = view.translation;
    if (!t) return;
    const out = document.createElement('p');
    out.className = 'readout translation-output';
    const output = t.output.filter((w) => w !== '<eos>').join(' ');
    out.textContent = `→ ${output || '(nothing)'}`;
    const note = document.createElement('p');
    note.className = 'plot-note';
    note.textContent = t.unknown.size
      ? `${t.unknown.size} word${t.unknown.size > 1 ? 's' : ''} outside the vocabulary (marked): the model reads ${t.unknown.size > 1 ? 'them' : 'it'} as <unk>.`
      : 'Every word is in the vocabulary.';
    translation.replaceChildren(sourceChips(t), note, out);
    root.dataset.translations = String(Number(root.dataset.translations ?? 0) + 1);
    translateCard.body.replaceChildren(alignmentPlot(t, widthOf(translateCard.body, { max: 560 })));
  }

  function drawCompare() {
    const c = view.compare;
    if (!c) return;
    const [withA, without] = c.results;
    compareText.textContent = `After ${c.epochs} epoch${c.epochs > 1 ? 's' : ''} each (${withA.steps} steps): held-out BLEU ${fmt(withA.bleu)} with attention, ${fmt(without.bleu)} without.`;
    compareCard.body.replaceChildren(lengthPlot(c.results, widthOf(compareCard.body, { max: 900 })));
  }

  return {
    render: () => {
      for (const name of Object.keys(parts)) schedule(name);
    },
  };
}
