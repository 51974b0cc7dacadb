// The bench's tables as text: a title line, then columns padded to their widest cell (the first
// left-aligned, the figures right-aligned).
export function printTable(title, header, rows, log = console.log) {
  const w = header.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)));
  log(`\n${title}`);
  const line = (r) => r.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join('  ');
  log(line(header));
  for (const r of rows) log(line(r));
}
