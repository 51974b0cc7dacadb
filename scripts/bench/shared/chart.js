// An SVG line chart of GFLOP/s against n: one panel per entry of `panels` ({ title, results }:
// attention per head width d, multi-head attention), one line per runner, each panel with its own
// axes; one legend for all panels, a runner keeping its colour across panels. Plain SVG text: the
// bench runs in Node without a DOM, and the chart is a file to look at.
const COLORS = ['#1b5e20', '#66bb6a', '#9e9e9e', '#1565c0', '#64b5f6', '#e65100', '#ffb74d', '#6a1b9a', '#ad1457', '#00838f'];
const DASHES = ['', '6 3', '2 3', '', '6 3', '', '6 3', '2 3', '', '6 3'];

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function renderChart(panels) {
  const runners = [...new Set(panels.flatMap((p) => p.results.map((r) => r.runner)))];
  const style = (runner) => {
    const i = runners.indexOf(runner);
    return `stroke="${COLORS[i % COLORS.length]}" stroke-width="2" stroke-dasharray="${DASHES[i % DASHES.length]}"`;
  };
  const panelW = 460, panelH = 300, margin = { left: 56, right: 16, top: 34, bottom: 44 };
  const legendH = 20 * runners.length + 10;
  const width = panelW * panels.length;
  const height = panelH + legendH;
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`, `<rect width="100%" height="100%" fill="white"/>`];
  panels.forEach(({ title, results }, p) => {
    if (!results.length) return;
    const maxG = Math.max(...results.map((r) => r.gflops)) * 1.1;
    const ns = [...new Set(results.map((r) => r.n))].sort((a, b) => a - b);
    const x = (n) => margin.left + (Math.log2(n) - Math.log2(ns[0])) / Math.max(1e-9, Math.log2(ns.at(-1)) - Math.log2(ns[0])) * (panelW - margin.left - margin.right);
    const y = (g) => panelH - margin.bottom - (g / maxG) * (panelH - margin.top - margin.bottom);
    parts.push(`<g transform="translate(${p * panelW},0)">`);
    parts.push(`<text x="${margin.left}" y="20" font-weight="bold">${escape(title)}</text>`);
    for (let t = 0; t <= 5; t++) {
      const g = (maxG / 5) * t;
      parts.push(`<line x1="${margin.left}" x2="${panelW - margin.right}" y1="${y(g)}" y2="${y(g)}" stroke="#eee"/>`);
      parts.push(`<text x="${margin.left - 6}" y="${y(g) + 4}" text-anchor="end">${g.toFixed(0)}</text>`);
    }
    for (const n of ns) parts.push(`<text x="${x(n)}" y="${panelH - margin.bottom + 16}" text-anchor="middle">${n}</text>`);
    parts.push(`<text x="${(margin.left + panelW - margin.right) / 2}" y="${panelH - 8}" text-anchor="middle">sequence length n (log scale)</text>`);
    for (const runner of runners) {
      const points = results.filter((r) => r.runner === runner).sort((a, b) => a.n - b.n);
      if (!points.length) continue;
      const path = points.map((r, j) => `${j ? 'L' : 'M'}${x(r.n).toFixed(1)},${y(r.gflops).toFixed(1)}`).join('');
      parts.push(`<path d="${path}" fill="none" ${style(runner)}/>`);
      // A lone point (a runner measured at one n only) draws no line: mark it.
      if (points.length === 1) parts.push(`<circle cx="${x(points[0].n).toFixed(1)}" cy="${y(points[0].gflops).toFixed(1)}" r="3" fill="${COLORS[runners.indexOf(runner) % COLORS.length]}"/>`);
    }
    parts.push('</g>');
  });
  runners.forEach((runner, i) => {
    const ly = panelH + 14 + 20 * i;
    parts.push(`<line x1="${margin.left}" x2="${margin.left + 30}" y1="${ly}" y2="${ly}" ${style(runner)}/>`);
    parts.push(`<text x="${margin.left + 38}" y="${ly + 4}">${escape(runner)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
