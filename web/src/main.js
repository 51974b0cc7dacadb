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

// The section a link (#id) points at, kept at the top of the window while the sections above it
// finish drawing (their plots and fonts arrive after the browser's own jump, which comes before
// the sections are built at all). Chromium and Firefox hold it there by scroll anchoring once
// the page has jumped again; WebKit has none, and landed 200-550 px off. Let go at the first
// scroll the page did not make (the reader's, or the anchoring's), or after HOLD_MS.
const HOLD_MS = 5000;
function holdLinkTarget(target) {
  if (!target) return;
  let held; // the scroll position the page last set
  const hold = () => {
    target.scrollIntoView();
    held = scrollY;
  };
  const observer = new ResizeObserver(hold);
  const release = () => {
    observer.disconnect();
    removeEventListener('scroll', scrolled);
    clearTimeout(timer);
  };
  const scrolled = () => {
    if (Math.abs(scrollY - held) > 1) release();
  };
  const timer = setTimeout(release, HOLD_MS);
  hold();
  observer.observe(document.body);
  addEventListener('scroll', scrolled, { passive: true });
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

  holdLinkTarget(location.hash && document.getElementById(location.hash.slice(1)));

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
