// 8. Benchmark: attention in your browser. A Web Worker (worker.js) times
// O = softmax(Q Kᵀ/√d) V on [1, n, d] float32 for the package's SIMD and scalar builds and for
// plain JavaScript, the SIMD build with a causal mask and with validLens = n/4, and one-token
// decode against a KV cache (decode.js); this module owns the controls, the URL state, the
// progress readout and the layout of the tables (tables.js) and the chart (plots.js). The page
// never waits on the benchmark: all timing happens in the worker.

import { button, controlBar, progressBar, select } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { oncePerFrame } from '../../ui/once-per-frame.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { watchedWorker } from '../../workers/watched-worker.js';
import {
  DECODE_SIZES, DEFAULT_SIZES, JS_MAX_N, SAMPLES, SAMPLE_MS, WIDTHS, newRun, parseSizes, summary,
} from './compute.js';
import { DECODE } from './decode.js';
import { TEXT } from './explanation.js';
import { gflopsChart } from './plots.js';
import { decodeTable, resultsTable } from './tables.js';

export function mountBenchmark(root) {
  const state = urlState('bench', { d: 64, n: DEFAULT_SIZES.join(',') }, root.id);
  const section = scaffold(root, { number: 8, title: 'Benchmark: attention in your browser', state });
  const { values } = state;
  root.dataset.benchState = 'idle';
  root.dataset.progressUpdates = '0';

  const width = select({
    name: 'bench-d', label: 'head width d',
    options: WIDTHS.map((d) => [String(d), String(d)]),
    value: String(values.d),
    onChange: (v) => section.set({ d: Number(v) }),
  });
  const runButton = button({ name: 'run-benchmark', label: 'Run benchmark', onClick: () => start() });
  runButton.element.classList.add('primary');
  const runGroup = document.createElement('div');
  runGroup.className = 'control control-run';
  runGroup.append(runButton.element);

  const { element: progressBox, text: progressText, bar: progress } = progressBar({ id: `${root.id}-progress-text`, text: 'not run yet' });

  const status = document.createElement('p');
  status.className = 'readout bench-status';
  status.setAttribute('aria-live', 'polite');
  status.textContent = `Press “Run benchmark”: it measures n = ${parseSizes(values.n).join(', ')} and takes about 5–20 s.`;

  const tableCard = card('GFLOP/s (higher is faster) and how many times faster SIMD is', { name: 'bench-table' });
  const chartCard = card('GFLOP/s against sequence length n (both axes log scale)', { name: 'bench-chart' });
  const decodeCard = card(`Decode: one token against a KV cache (${DECODE.heads} heads, d = ${DECODE.d}), ms per call`, { name: 'bench-decode' });
  const results = document.createElement('div');
  results.className = 'bench-results';
  results.hidden = true;
  results.append(plotGrid(tableCard, chartCard), plotGrid(decodeCard));
  section.append(prose(TEXT), controlBar(width, runGroup, progressBox), status, results);

  let worker = null;
  let runId = 0;
  let run = null; // compute.js's newRun, filled by the worker's messages
  // Results arrive in bursts (every runner's at one n together): one redraw per frame.
  const redraw = oncePerFrame(() => draw());

  function getWorker() {
    if (worker) return worker;
    worker = watchedWorker(
      () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'attention-benchmark' }),
      {
        onMessage,
        onError: (message) => {
          fail(message);
          worker?.terminate();
          worker = null;
        },
        onRestart: () => console.warn('benchmark: the worker stopped answering while it loaded; started another'),
      },
    );
    return worker;
  }

  function start() {
    if (run && !run.finished) return;
    runId += 1;
    run = newRun(runId, Number(width.value), parseSizes(values.n));
    const { d, sizes } = run;
    setRunning(true);
    progress.removeAttribute('value'); // indeterminate while the worker loads the two modules
    progressText.textContent = 'loading the SIMD and scalar builds…';
    status.textContent = `Measuring d = ${d}, n = ${sizes.join(', ')}…`;
    results.hidden = false;
    draw();
    getWorker().postMessage({
      type: 'run', id: run.id, sizes, d, jsMaxN: JS_MAX_N, decodeSizes: DECODE_SIZES, samples: SAMPLES, sampleMs: SAMPLE_MS,
    });
  }

  function setRunning(running) {
    root.dataset.benchState = running ? 'running' : run?.error ? 'error' : 'done';
    runButton.element.disabled = running;
    runButton.element.textContent = running ? 'Running…' : run ? 'Run again' : 'Run benchmark';
    width.input.disabled = running;
    root.setAttribute('aria-busy', String(running));
  }

  function onMessage(message) {
    if (!run || message.id !== run.id) return;
    if (message.type === 'ready') {
      run.backends = message.backends;
    } else if (message.type === 'progress') {
      const { step, total, n, sample, samples, decode: decoding } = message;
      progress.max = total;
      progress.value = step + sample / samples;
      progressText.textContent = `${decoding ? 'decode, ' : ''}n = ${n} (${step + 1}/${total}): sample ${sample}/${samples}`;
      root.dataset.progressUpdates = String(Number(root.dataset.progressUpdates) + 1);
    } else if (message.type === 'result') {
      run.rows.set(`${message.runner}:${message.n}`, message);
      redraw.schedule();
    } else if (message.type === 'decode') {
      run.decode.set(message.n, message);
      redraw.schedule();
    } else if (message.type === 'done') {
      run.finished = true;
      redraw.flush(); // the tables are complete when the state says done
      progress.value = progress.max;
      progressText.textContent = `done: ${run.rows.size + run.decode.size} measurements in ${(message.elapsedMs / 1000).toFixed(1)} s`;
      status.textContent = summary(run);
      setRunning(false);
    } else if (message.type === 'error') {
      fail(message.message);
    }
  }

  function fail(text) {
    if (!run) return;
    run.finished = true;
    run.error = text;
    progress.value = 0;
    progressText.textContent = 'stopped';
    status.textContent = `The benchmark failed: ${text}`;
    setRunning(false);
  }

  function draw() {
    if (!run) return;
    tableCard.body.replaceChildren(resultsTable(run));
    chartCard.body.replaceChildren(gflopsChart(run, widthOf(chartCard.body)));
    decodeCard.body.replaceChildren(decodeTable(run));
  }

  return { render: draw };
}
