// The page: loads the wasm package once, names its backend and threads, mounts the eight sections
// and redraws them when the page width changes.
import './style.css';
import { loadAttention } from 'attention-wasm';
import { mountQkv } from './sections/qkv/index.js';
import { mountKernelRegression } from './sections/kernel-regression/index.js';
import { mountScoring } from './sections/scoring/index.js';
import { mountMultiHead } from './sections/multi-head/index.js';
import { mountBenchmark } from './sections/benchmark/index.js';
import { mountBahdanau } from './sections/bahdanau/index.js';
import { mountTransformer } from './sections/transformer/index.js';
import { mountInduction } from './sections/induction/index.js';
import { invalidateWidths } from './ui/plot.js';

const SECTIONS = [
  ['qkv', mountQkv],
  ['kernel-regression', mountKernelRegression],
  ['scoring', mountScoring],
  ['multi-head', mountMultiHead],
  ['bahdanau', mountBahdanau],
  ['transformer', mountTransformer],
  ['induction', mountInduction],
  ['benchmark', mountBenchmark],
];

// The threads the page computes on, and why not more where the package says so (served without
// the cross-origin isolation headers, say: docs/threads.md).
function showThreads(element, attn) {
  const cores = navigator.hardwareConcurrency;
  element.textContent = `${attn.threads} ${attn.threads === 1 ? 'thread' : 'threads'}`;
  if (attn.threadsReason) element.textContent += ` (${attn.threadsReason})`;
  element.title = `this device reports ${cores} logical cores; the package uses up to 8`;
  element.dataset.threads = attn.threads;
  element.dataset.reason = attn.threadsReason ?? '';
}

async function start() {
  const backend = document.getElementById('backend');
  const t0 = performance.now();
  const attn = await loadAttention();
  const loadMs = performance.now() - t0;
  const [name, title] = attn.relaxedSimd
    ? [`${attn.backend} + relaxed`, 'WebAssembly with 128-bit SIMD, matrix products with relaxed SIMD\'s fused multiply-add']
    : attn.backend === 'wasm-simd'
      ? [attn.backend, 'WebAssembly with 128-bit SIMD (this browser does not validate relaxed SIMD)']
      : [attn.backend, 'WebAssembly without SIMD (this browser does not validate SIMD128)'];
  backend.textContent = name;
  backend.title = title;
  backend.dataset.backend = attn.backend;
  backend.dataset.relaxedSimd = attn.relaxedSimd;
  showThreads(document.getElementById('threads'), attn);
  document.getElementById('load-time').textContent = `(loaded in ${loadMs.toFixed(0)} ms)`;

  const mounted = SECTIONS.map(([id, mount]) => {
    const view = mount(document.getElementById(id), attn);
    view.render();
    return view;
  });
  document.body.dataset.ready = 'true';

  // Content is built after the browser's own jump to #section, so jump again.
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();

  let lastWidth = document.documentElement.clientWidth;
  let frame = 0;
  new ResizeObserver(() => {
    const width = document.documentElement.clientWidth;
    if (width === lastWidth || frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      lastWidth = document.documentElement.clientWidth;
      invalidateWidths();
      for (const view of mounted) view.render();
    });
  }).observe(document.documentElement);
}

start().catch((error) => {
  const backend = document.getElementById('backend');
  backend.textContent = `failed to load: ${error.message}`;
  backend.classList.add('error');
  console.error(error);
});
