// Small helpers around Observable Plot: a responsive width, a plot card, and pointer
// coordinates on a plot.

// Container widths are read once and cached until the page width changes: reading clientWidth
// right after a plot was replaced would force a synchronous layout of the whole page on every
// slider step (measured: most of a redraw's time).
let layoutEpoch = 0;
const widths = new WeakMap();

/** Forget the cached widths (the page was resized). */
export function invalidateWidths() {
  layoutEpoch += 1;
}

/** The width a plot in `container` should take: its content width, within [min, max]. */
export function widthOf(container, { min = 260, max = 1100 } = {}) {
  let cached = widths.get(container);
  if (!cached || cached.epoch !== layoutEpoch || cached.width === 0) {
    cached = { epoch: layoutEpoch, width: container.clientWidth };
    widths.set(container, cached);
  }
  const w = cached.width || min;
  return Math.max(min, Math.min(max, Math.floor(w)));
}

/** A figure: <figure class="plot-card"><figcaption>title</figcaption><div class="plot"/></figure>. */
export function card(title, { wide = false, name } = {}) {
  const figure = document.createElement('figure');
  figure.className = `plot-card${wide ? ' wide' : ''}`;
  if (name) figure.dataset.plot = name;
  const caption = document.createElement('figcaption');
  caption.textContent = title;
  const body = document.createElement('div');
  body.className = 'plot';
  figure.append(caption, body);
  return { figure, body, caption };
}

/** Pixel ↔ data for pointer events on a plot made by Plot.plot (handles CSS scaling). */
export function pointerData(plot, event) {
  const svg = plot.tagName === 'svg' ? plot : plot.querySelector('svg');
  const box = svg.getBoundingClientRect();
  const zoom = box.width / svg.width.baseVal.value;
  return { px: (event.clientX - box.left) / zoom, py: (event.clientY - box.top) / zoom };
}
