// The benchmark section's decode card: one token's attention against a resident KV cache
// (attn.KVCache; measured by decode.js in the worker) beside the time of copying
// K and V once, per cached length n. A build without attn.KVCache gets one line saying so.
import { card } from '../../ui/plot.js';

const fmt = (ms) => (ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));

export function decodeCard(sizes, { heads, d }) {
  const decode = card(`Decode: one token against a KV cache (${heads} heads, d = ${d}), ms per call`, { name: 'bench-decode' });

  /** rows: Map(n → decode message) of this run; skipped: the reason, or null. */
  function update(rows, skipped) {
    if (skipped) {
      const note = document.createElement('p');
      note.className = 'readout bench-decode-skipped';
      note.textContent = `Not measured: ${skipped}.`;
      decode.body.replaceChildren(note);
      return;
    }
    const table = document.createElement('table');
    table.className = 'bench-table bench-decode';
    table.createCaption().textContent = `nq = 1 query per head against n cached positions; the copy is ` +
      `Float32Array.set of K and V (${heads}·n·${d} floats each), the memory traffic a decode cannot avoid.`;
    const head = table.createTHead().insertRow();
    for (const text of ['', ...sizes.map((n) => `n = ${n}`)]) {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = text;
      head.append(th);
    }
    const body = table.createTBody();
    const line = (key, label, cell, className) => {
      const tr = body.insertRow();
      tr.dataset.decode = key;
      if (className) tr.className = className;
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = label;
      tr.append(th);
      for (const n of sizes) {
        const td = tr.insertCell();
        const r = rows.get(n);
        if (!r) {
          td.textContent = '…';
          td.className = 'pending';
          continue;
        }
        td.dataset.n = String(n);
        cell(td, r);
      }
    };
    line('attend', 'KVCache.attend', (td, r) => {
      td.dataset.ms = String(r.ms);
      td.dataset.maxDiff = String(r.maxDiff);
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
    const scroller = document.createElement('div');
    scroller.className = 'table-scroll';
    scroller.append(table);
    decode.body.replaceChildren(scroller);
  }
  return { card: decode, update };
}
