// Section 7's tables, pure functions of a run's record (compute.js's newRun): GFLOP/s per runner
// and n with the ratio rows, and the decode rows.

import { DECODE_SIZES, JS_MAX_N, SAMPLES } from './compute.js';
import { DECODE } from './decode.js';
import { RATIOS, RUNNERS, fmtGflops, fmtMs } from './plots.js';

const headerCell = (scope, ...content) => {
  const th = document.createElement('th');
  th.scope = scope;
  th.append(...content);
  return th;
};

// A table in a box that scrolls sideways on a narrow screen.
const scrolling = (table) => {
  const scroller = document.createElement('div');
  scroller.className = 'table-scroll';
  scroller.append(table);
  return scroller;
};

// A column's header, "n = 1024": the "n = " hides on a phone's width (style.css), where the
// columns need the room.
function sizeHeader(n) {
  const prefix = document.createElement('span');
  prefix.className = 'n-prefix';
  prefix.textContent = 'n = ';
  return headerCell('col', prefix, String(n));
}

/** GFLOP/s per runner (rows) and n (columns), each over its median time; then the ratio rows. */
export function resultsTable({ sizes, d, rows, backends }) {
  const table = document.createElement('table');
  table.className = 'bench-table';
  table.createCaption().textContent = `d = ${d}; columns: sequence length n. Each cell: GFLOP/s = 4·n²·d / time, and below it the median time of one call. ` +
    'The masked rows run the SIMD build and count the same dense flops.';
  table.createTHead().insertRow().append(headerCell('col', 'runner'), ...sizes.map(sizeHeader));
  const body = table.createTBody();
  const runs = (name) => !backends || !((name === 'simd' && backends.simd !== 'wasm-simd')
    || (name === 'simd128' && !backends.relaxedSimd) || (name === 'threads' && backends.threads <= 1));
  for (const [name, runner] of Object.entries(RUNNERS)) {
    if (!runs(name)) continue;
    const tr = body.insertRow();
    tr.dataset.runner = name;
    tr.append(headerCell('row', runner.label));
    for (const n of sizes) {
      const td = tr.insertCell();
      td.dataset.n = String(n);
      const r = rows.get(`${name}:${n}`);
      if (r) {
        Object.assign(td.dataset, { gflops: String(r.gflops), ms: String(r.ms), maxDiff: String(r.maxDiff) });
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
  // A ratio row only where this browser runs both of its runners (no 'SIMD ÷ no FMA' where
  // there is no relaxed SIMD to compare with).
  for (const [a, b] of RATIOS.filter(([a, b]) => runs(a) && runs(b))) {
    const tr = body.insertRow();
    tr.className = 'ratio';
    tr.dataset.ratio = `${a}/${b}`;
    tr.append(headerCell('row', `${RUNNERS[a].short} ÷ ${RUNNERS[b].short}`));
    for (const n of sizes) {
      const td = tr.insertCell();
      const ra = rows.get(`${a}:${n}`);
      const rb = rows.get(`${b}:${n}`);
      td.textContent = ra && rb ? `${(ra.gflops / rb.gflops).toFixed(1)}×` : '—';
      if (ra && rb) td.dataset.ratio = String(ra.gflops / rb.gflops);
    }
  }
  return scrolling(table);
}

/** Decode per cached length n: KVCache.attend, one copy of K and V, and their ratio. */
export function decodeTable({ decode }) {
  const { heads, d } = DECODE;
  const table = document.createElement('table');
  table.className = 'bench-table bench-decode';
  table.createCaption().textContent = `nq = 1 query per head against n cached positions; the copy is ` +
    `Float32Array.set of K and V (${heads}·n·${d} floats each), the memory traffic a decode cannot avoid.`;
  table.createTHead().insertRow().append(headerCell('col', ''), ...DECODE_SIZES.map(sizeHeader));
  const body = table.createTBody();
  const line = (key, label, cell, className) => {
    const tr = body.insertRow();
    tr.dataset.decode = key;
    if (className) tr.className = className;
    tr.append(headerCell('row', label));
    for (const n of DECODE_SIZES) {
      const td = tr.insertCell();
      const r = decode.get(n);
      if (!r) {
        td.textContent = '…';
        td.className = 'pending';
        continue;
      }
      td.dataset.n = String(n);
      cell(td, r);
    }
  };
  const fmt = (ms) => (ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
  line('attend', 'KVCache.attend', (td, r) => {
    Object.assign(td.dataset, { ms: String(r.ms), maxDiff: String(r.maxDiff) });
    td.textContent = fmt(r.ms);
  });
  line('copy', 'copy K and V once', (td, r) => {
    td.dataset.ms = String(r.copyMs);
    td.textContent = fmt(r.copyMs);
  });
  line('ratio', 'attend ÷ copy', (td, r) => {
    td.dataset.ratio = String(r.ms / r.copyMs);
    td.textContent = `${(r.ms / r.copyMs).toFixed(1)}×`;
  }, 'ratio');
  return scrolling(table);
}
