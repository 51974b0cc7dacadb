// Pointer interaction on section 2's plots: drag a training point on the fit, hover the fit or
// the heatmap to pick a query (a row of HEAT_QUERIES). The plots are redrawn on every update, so
// the current ones are asked for at each event.

import { rowAt } from '../../ui/heatmap.js';
import { pointerData } from '../../ui/plot.js';
import { HEAT_QUERIES, X_MAX, Y_DOMAIN } from './compute.js';

// The training point within reach of the pointer (more on touch), or null.
function nearestPoint(plot, points, event) {
  const { px, py } = pointerData(plot, event);
  const xs = plot.scale('x');
  const ys = plot.scale('y');
  let best = null;
  let bestDist = event.pointerType === 'touch' ? 24 : 14;
  points.forEach((p, i) => {
    const d = Math.hypot(xs.apply(p.x) - px, ys.apply(p.y) - py);
    if (d < bestDist) {
      bestDist = d;
      best = i;
    }
  });
  return best;
}

// The row of HEAT_QUERIES (0, 0.1, …, 4.9) nearest the pointer's x, or null off the axis.
function queryAt(plot, event) {
  const { px } = pointerData(plot, event);
  const x = plot.scale('x').invert(px);
  if (x < 0 || x > X_MAX) return null;
  return Math.min(HEAT_QUERIES.length - 1, Math.max(0, Math.round(x * 10)));
}

/**
 * fit, heat: the cards' bodies; plots() → { fit, heat }: the plots drawn now (or null);
 * points() → the training points. onHover(row | null) when the hovered query changes,
 * onDrag(i, { x, y }) while point i moves, onDrop() when a drag ends.
 */
export function followPointer({ fit, heat, plots, points, onHover, onDrag, onDrop }) {
  let hover = null;
  let dragging = null;
  const hoverRow = (row) => {
    if (row === hover) return;
    hover = row;
    onHover(row);
  };

  fit.addEventListener('pointerdown', (event) => {
    const plot = plots().fit;
    const i = plot ? nearestPoint(plot, points(), event) : null;
    if (i == null) return;
    event.preventDefault();
    dragging = i;
    fit.setPointerCapture(event.pointerId);
  });
  fit.addEventListener('pointermove', (event) => {
    const plot = plots().fit;
    if (!plot) return;
    if (dragging == null) {
      hoverRow(queryAt(plot, event));
      return;
    }
    const { px, py } = pointerData(plot, event);
    const x = Math.min(X_MAX - 1e-3, Math.max(0, plot.scale('x').invert(px)));
    const y = Math.min(Y_DOMAIN[1], Math.max(Y_DOMAIN[0], plot.scale('y').invert(py)));
    onDrag(dragging, { x, y });
  });
  const endDrag = () => {
    if (dragging == null) return;
    dragging = null;
    onDrop();
  };
  fit.addEventListener('pointerup', endDrag);
  fit.addEventListener('pointercancel', endDrag);
  fit.addEventListener('pointerleave', () => {
    if (dragging == null) hoverRow(null);
  });
  heat.addEventListener('pointermove', (event) => {
    const plot = plots().heat;
    if (plot) hoverRow(rowAt(plot, event));
  });
  heat.addEventListener('pointerleave', () => hoverRow(null));
}
