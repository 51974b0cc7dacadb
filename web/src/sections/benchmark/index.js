// 6. Benchmark: attention in your browser. A Web Worker (worker.js) times
// O = softmax(Q Kᵀ/√d) V on [1, n, d] float32 for the package's SIMD and scalar builds and for
// plain JavaScript, the SIMD build with a causal mask and with validLens = n/4, and one-token
// decode against a KV cache; this module owns the controls, the progress readout, the tables and
// the chart (the decode card: decode-card.js). The page never waits on the benchmark: all
// timing happens in the worker.

import * as Plot from '@observablehq/plot';
import { DECODE } from './decode.js';
import { button, controlBar, progressBar, select } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { decodeCard } from './decode-card.js';

const DEFAULT_SIZES = [128, 256, 512, 1024];
const WIDTHS = [32, 64, 128];
// Plain JS is O(n²d) in the obvious loops, ~10× slower than the wasm builds: above this n it
// would take most of the run.
const JS_MAX_N = 512;
const SAMPLES = 5;
const SAMPLE_MS = 30;
const MIN_N = 16;
const MAX_N = 2048;
const MAX_SIZES = 6;
// Cached lengths for the decode rows (12 heads, d = 64: GPT-2 small's heads).
const DECODE_SIZES = [256, 1024, 4096];
// The runners' outputs are compared at every n: float32 rounding stays far below this.
const AGREE = 1e-4;

// Greyscale-readable: the three runners differ in lightness, dash and marker, and each line is
// labelled at its end.
const RUNNERS = {
  // The two SIMD lines run close together (1.1x apart): their end labels are nudged apart.
  simd: { label: 'wasm SIMD', short: 'SIMD', stroke: '#1d2433', dash: null, symbol: 'circle', dy: -4 },
  simd128: { label: 'SIMD, no FMA', short: 'no FMA', stroke: '#7a7f8a', dash: '5 3', symbol: 'cross', dy: 7 },
  scalar: { label: 'wasm scalar', short: 'scalar', stroke: '#2a6f97', dash: '7 4', symbol: 'square' },
  js: { label: 'plain JS', short: 'JS', stroke: '#c9733a', dash: '2 3', symbol: 'triangle' },
  causal: { label: 'SIMD, causal', short: 'causal', stroke: '#5b8c5a', dash: '4 2 1 2', symbol: 'diamond' },
  quarter: { label: 'SIMD, valid n/4', short: 'n/4', stroke: '#8e5ea2', dash: '1 2', symbol: 'star' },
};
// a ÷ b in GFLOP/s: how many times faster a runs. The masked rows count dense flops, so theirs
// is how much less time the mask costs than the unmasked call.
const RATIOS = [['simd', 'simd128'], ['simd', 'scalar'], ['simd', 'js'], ['causal', 'simd'], ['quarter', 'simd']];

const TEXT = `
<p>How fast is attention here, on this device? The button below times one call of the package's
<code>scaledDotProductAttention(q, k, v)</code>, that is
$O = \\operatorname{softmax}\\!\\big(QK^\\top/\\sqrt d\\big)\\,V$ with $Q, K, V$ of shape
$[1, n, d]$ in float32 (self-attention sized: $n$ queries against $n$ keys), in three ways: the
package's WebAssembly build with 128-bit SIMD (twice where your browser has relaxed SIMD: see
below), its scalar build (the same C++ compiled without
SIMD) and plain JavaScript (the obvious loops over <code>Float32Array</code>s). The wasm call runs
the <strong>fused kernel</strong>: scores a tile of keys at a time, softmaxed online and pooled into
the output at once, so no $n \\times n$ matrix is ever stored; the time includes copying $Q, K, V$
into wasm memory and the output back.</p>
<p>Everything runs on <strong>one thread</strong>, a Web Worker, so this page keeps drawing while
it measures. Each figure is the median of ${SAMPLES} samples after a warm-up, each sample
repeating the call until it lasts at least ${SAMPLE_MS} ms; at each $n$ the runners take their
samples in turns, so a slow moment of the device falls on all of them alike. Throughput counts the two matrix
products, $2n^2d$ flops each (the exponentials are not counted):
$$\\text{GFLOP/s} = \\frac{4\\,n^2 d}{\\text{time}}.$$
Plain JS stops at $n = ${JS_MAX_N}$ to keep the run short. These are <strong>your own
numbers</strong>, measured just now in your browser; nothing is sent anywhere. They vary with the
device, its power state and what else is running: run it twice.</p>
<p>Where your browser has relaxed SIMD, the SIMD row's products use its <strong>fused
multiply-add</strong> (one instruction and one rounding for $a \\cdot b + c$), and the row
"SIMD, no FMA" times the same build with SIMD128's separate multiply and add.</p>
<p>Two more rows time the SIMD build with a <strong>causal mask</strong> (query $i$ sees keys
$j \\le i$) and with <code>validLens</code> $= n/4$: the kernel skips key blocks that are wholly
masked, so these should take about a half and a quarter of the unmasked time. They are counted
with the same $4n^2d$ flops, so their ratio to the SIMD row is how much time the mask saves. Last,
<strong>decode</strong>: one new token's query per head against $n$ cached keys and values kept in
wasm memory (<code>attn.KVCache</code>, ${DECODE.heads} heads, $d = ${DECODE.d}$), beside the time
of merely copying those keys and values once.</p>`;

const fmtGflops = (g) => (g >= 100 ? g.toFixed(0) : g >= 10 ? g.toFixed(1) : g.toFixed(2));
const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));

/** The 1-2-5 series (…, 0.5, 1, 2, 5, 10, …) inside [lo, hi]: the log axis's ticks and grid. */
function ticks125([lo, hi]) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const t = m * 10 ** e;
      if (t >= lo && t <= hi) ticks.push(Number(t.toPrecision(1)));
    }
  }
  return ticks;
}

/** The sizes from the URL ("128,256,512,1024"): integers in [MIN_N, MAX_N], sorted, deduplicated. */
export function parseSizes(text) {
  const sizes = [...new Set(String(text).split(',').map((s) => Number(s.trim())))]
    .filter((n) => Number.isInteger(n) && n >= MIN_N && n <= MAX_N)
    .sort((a, b) => a - b)
    .slice(0, MAX_SIZES);
  return sizes.length ? sizes : DEFAULT_SIZES;
}

export function mountBenchmark(root) {
  const state = urlState('bench', { d: 64, n: DEFAULT_SIZES.join(',') }, root.id);
  const section = scaffold(root, { number: 6, title: 'Benchmark: attention in your browser', state });
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
  const decode = decodeCard(DECODE_SIZES, DECODE);
  const results = document.createElement('div');
  results.className = 'bench-results';
  results.hidden = true;
  results.append(plotGrid(tableCard, chartCard), plotGrid(decode.card));
  section.append(prose(TEXT), controlBar(width, runGroup, progressBox), status, results);

  let worker = null;
  let runId = 0;
  // { id, d, sizes, rows: Map('runner:n' → result), runners: Set, backends, decode: Map(n → result), decodeSkipped }
  let run = null;

  function getWorker() {
    if (worker) return worker;
    worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'attention-benchmark' });
    worker.addEventListener('message', ({ data }) => onMessage(data));
    worker.addEventListener('error', (event) => {
      event.preventDefault();
      fail(event.message || 'the benchmark worker failed to start');
      worker?.terminate();
      worker = null;
    });
    return worker;
  }

  function start() {
    if (run && !run.finished) return;
    const sizes = parseSizes(values.n);
    const d = Number(width.value);
    runId += 1;
    run = {
      id: runId, d, sizes, rows: new Map(), runners: new Set(), backends: null, finished: false, t0: performance.now(),
      decode: new Map(), decodeSkipped: null,
    };
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
      run.runners.add(message.runner);
      scheduleDraw();
    } else if (message.type === 'decode') {
      run.decode.set(message.n, message);
      scheduleDraw();
    } else if (message.type === 'decode-skipped') {
      run.decodeSkipped = message.reason;
      scheduleDraw();
    } else if (message.type === 'done') {
      run.finished = true;
      flushDraw(); // the tables are complete when the state says done
      progress.value = progress.max;
      progressText.textContent = `done: ${run.rows.size + run.decode.size} measurements in ${(message.elapsedMs / 1000).toFixed(1)} s`;
      status.textContent = summary();
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

  // One sentence for the screen and for screen readers: the backends and the largest n.
  function summary() {
    const { backends, d, sizes } = run;
    const builds = backends?.simd !== 'wasm-simd'
      ? 'the wasm (scalar) build — your browser does not validate WebAssembly SIMD, so there is no SIMD row —'
      : backends.relaxedSimd
        ? 'the wasm-simd build with its relaxed-SIMD (fused multiply-add) loops and without them, the wasm (scalar) build'
        : 'the wasm-simd and wasm (scalar) builds (your browser does not validate relaxed SIMD, so there is no "no FMA" row)';
    const maxDiff = Math.max(...[...run.rows.values(), ...run.decode.values()].map((r) => r.maxDiff));
    const parts = [`Measured in your browser, one worker thread, d = ${d}: ${builds} and plain JS.`];
    const n = [...sizes].reverse().find((s) => run.rows.has(`simd:${s}`) && run.rows.has(`js:${s}`));
    if (n) {
      const ratio = run.rows.get(`simd:${n}`).gflops / run.rows.get(`js:${n}`).gflops;
      parts.push(`At n = ${n} the SIMD build is ${ratio.toFixed(1)}× as fast as plain JS.`);
    }
    const last = sizes[sizes.length - 1];
    const time = (runner) => run.rows.get(`${runner}:${last}`)?.ms;
    if (time('simd') && time('causal') && time('quarter')) {
      parts.push(`At n = ${last} a causal mask takes ${(time('causal') / time('simd')).toFixed(2)}× the unmasked time, ` +
        `validLens = n/4 ${(time('quarter') / time('simd')).toFixed(2)}×.`);
    }
    const longest = run.decode.get(DECODE_SIZES[DECODE_SIZES.length - 1]);
    if (longest) {
      parts.push(`Decoding one token against ${longest.n} cached positions takes ${longest.ms.toFixed(2)} ms, ` +
        `${(longest.ms / longest.copyMs).toFixed(1)}× the time of copying the cache once.`);
    }
    if (maxDiff <= AGREE) {
      parts.push(`Every output agrees with plain JS in double precision (checked on three rows) to ${maxDiff.toExponential(0)} (max |difference|).`);
    } else {
      parts.push(`Warning: an output differs from plain JS in double precision by up to ${maxDiff.toPrecision(2)}, more than float32 rounding explains: a bug.`);
    }
    return parts.join(' ');
  }

  // Results arrive in bursts (every runner's at one n together): one redraw per animation frame,
  // not one per message, so that the table and chart never hold the main thread for long.
  let drawPending = false;
  function scheduleDraw() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(flushDraw);
  }
  function flushDraw() {
    if (!drawPending) return;
    drawPending = false;
    draw();
  }

  function draw() {
    if (!run) return;
    drawTable();
    drawChart();
    decode.update(run.decode, run.decodeSkipped);
  }

  function drawTable() {
    const { sizes, d, rows } = run;
    const table = document.createElement('table');
    table.className = 'bench-table';
    const caption = table.createCaption();
    caption.textContent = `d = ${d}; columns: sequence length n. Each cell: GFLOP/s = 4·n²·d / time, and below it the median time of one call. ` +
      'The masked rows run the SIMD build and count the same dense flops.';
    const head = table.createTHead().insertRow();
    const corner = document.createElement('th');
    corner.scope = 'col';
    corner.textContent = 'runner';
    head.append(corner, ...sizes.map((n) => {
      const th = document.createElement('th');
      th.scope = 'col';
      const prefix = document.createElement('span');
      prefix.className = 'n-prefix';
      prefix.textContent = 'n = ';
      th.append(prefix, String(n));
      return th;
    }));
    const body = table.createTBody();
    const rowHead = (tr, text) => {
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = text;
      tr.append(th);
    };
    for (const [name, runner] of Object.entries(RUNNERS)) {
      if (name === 'simd' && run.backends && run.backends.simd !== 'wasm-simd') continue;
      if (name === 'simd128' && run.backends && !run.backends.relaxedSimd) continue;
      const tr = body.insertRow();
      tr.dataset.runner = name;
      rowHead(tr, runner.label);
      for (const n of sizes) {
        const td = tr.insertCell();
        td.dataset.n = String(n);
        const r = rows.get(`${name}:${n}`);
        if (r) {
          td.dataset.gflops = String(r.gflops);
          td.dataset.ms = String(r.ms);
          td.dataset.maxDiff = String(r.maxDiff);
          const time = document.createElement('small');
          time.textContent = `${fmtMs(r.ms)} ms`;
          td.append(fmtGflops(r.gflops), time);
          td.title = `${fmtMs(r.ms)} ms per call (median of ${SAMPLES} samples of ${r.reps} call${r.reps > 1 ? 's' : ''})`;
        } else if (name === 'js' && n > JS_MAX_N) {
          td.textContent = '—';
          td.title = `plain JS is not run above n = ${JS_MAX_N}`;
          td.className = 'skipped';
        } else {
          td.textContent = '…';
          td.className = 'pending';
        }
      }
    }
    for (const [a, b] of RATIOS) {
      const tr = body.insertRow();
      tr.className = 'ratio';
      tr.dataset.ratio = `${a}/${b}`;
      rowHead(tr, `${RUNNERS[a].short} ÷ ${RUNNERS[b].short}`);
      for (const n of sizes) {
        const td = tr.insertCell();
        const ra = rows.get(`${a}:${n}`);
        const rb = rows.get(`${b}:${n}`);
        td.textContent = ra && rb ? `${(ra.gflops / rb.gflops).toFixed(1)}×` : '—';
        if (ra && rb) td.dataset.ratio = String(ra.gflops / rb.gflops);
      }
    }
    const scroller = document.createElement('div');
    scroller.className = 'table-scroll';
    scroller.append(table);
    tableCard.body.replaceChildren(scroller);
  }

  function drawChart() {
    const { sizes, rows } = run;
    const data = [...rows.values()].map((r) => ({ ...r, label: RUNNERS[r.runner].label }));
    const w = widthOf(chartCard.body);
    const marks = [];
    for (const [name, runner] of Object.entries(RUNNERS)) {
      const points = data.filter((r) => r.runner === name).sort((a, b) => a.n - b.n);
      if (!points.length) continue;
      marks.push(
        Plot.line(points, { x: 'n', y: 'gflops', stroke: runner.stroke, strokeWidth: 2, strokeDasharray: runner.dash }),
        Plot.dot(points, { x: 'n', y: 'gflops', fill: runner.stroke, symbol: runner.symbol, r: 4, stroke: 'white' }),
        Plot.text(points.slice(-1), {
          x: 'n', y: 'gflops', text: () => runner.label, dx: 8, dy: runner.dy ?? 0, textAnchor: 'start', fill: runner.stroke,
          fontSize: 11, fontWeight: 600,
        }),
      );
    }
    const gflops = data.map((r) => r.gflops);
    const yDomain = gflops.length ? [Math.min(...gflops) / 1.3, Math.max(...gflops) * 1.3] : [0.1, 10];
    const domain = [sizes[0], sizes[sizes.length - 1]];
    if (domain[0] === domain[1]) domain[1] *= 2;
    chartCard.body.replaceChildren(Plot.plot({
      width: w,
      height: 300,
      marginLeft: 52,
      marginRight: 112, // room for the longest end label, "SIMD, valid n/4"
      marginBottom: 40,
      x: { type: 'log', base: 2, domain, ticks: sizes, tickFormat: String, label: 'sequence length n →' },
      y: { type: 'log', label: '↑ GFLOP/s', grid: true, domain: yDomain, ticks: ticks125(yDomain), tickFormat: '~g' },
      marks: [
        ...marks,
        Plot.tip(data, Plot.pointer({
          x: 'n', y: 'gflops',
          title: (r) => `${r.label}, n = ${r.n}\n${fmtGflops(r.gflops)} GFLOP/s\n${fmtMs(r.ms)} ms per call`,
        })),
      ],
    }));
  }

  return { render: draw };
}
