// The bench's tables: a section returns them as { title, header, rows } and the runner prints
// them as text, a title line, then columns padded to their widest cell (the first left-aligned,
// the figures right-aligned).

export function printTable({ title, header, rows }, log = console.log) {
  const w = header.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)));
  log(`\n${title}`);
  const line = (r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  log(line(header));
  for (const r of rows) log(line(r));
}

/** A figure, or — where a runner has none. */
export const fmt = (x, digits = 1) => (x === undefined || x === null || Number.isNaN(x) ? '—' : x.toFixed(digits));

/**
 * One row per runner of `list` ([{ runner, n, ms }]): per n its ms and its time ÷ the `baseline`
 * runner's at the same n.
 */
export function ratioTable(title, list, baseline) {
  const names = [...new Set(list.map((r) => r.runner))];
  const ns = [...new Set(list.map((r) => r.n))];
  const at = (name, n) => list.find((r) => r.runner === name && r.n === n);
  const rows = names.map((name) => [name, ...ns.flatMap((n) => {
    const r = at(name, n), base = at(baseline, n);
    return r ? [fmt(r.ms, 3), base ? (r.ms / base.ms).toFixed(2) : '—'] : ['—', '—'];
  })]);
  return { title, header: ['runner', ...ns.flatMap((n) => [`n=${n} ms`, `÷ ${baseline}`])], rows };
}
