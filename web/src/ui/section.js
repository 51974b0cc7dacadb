// The frame every section shares: a heading with its number, a "link to this view" anchor that
// carries the section's URL state, the compute/draw timing readout, then the section's content.

import { updateMeter } from './update-meter.js';

export function scaffold(root, { number, title, state }) {
  const head = document.createElement('header');
  head.className = 'section-head';
  const h2 = document.createElement('h2');
  h2.id = `${root.id}-title`;
  const num = document.createElement('span');
  num.className = 'section-number';
  num.textContent = String(number);
  h2.append(num, ` ${title}`);
  const meta = document.createElement('div');
  meta.className = 'section-meta';
  const share = document.createElement('a');
  share.className = 'share-link';
  share.textContent = 'link to this view';
  share.title = 'A link that reopens this section as it is now';
  const readout = document.createElement('span');
  readout.className = 'timing';
  meta.append(share, readout);
  head.append(h2, meta);
  root.replaceChildren(head);

  const meter = updateMeter(root, readout);
  const refreshLink = () => {
    share.href = state.href();
  };
  refreshLink();
  return {
    meter,
    /** Updates the state (and the URL and the share link). */
    set(patch) {
      state.set(patch);
      refreshLink();
    },
    append: (...nodes) => root.append(...nodes),
  };
}

/** A responsive grid of plot cards. */
export function plotGrid(...cards) {
  const grid = document.createElement('div');
  grid.className = 'plot-grid';
  grid.append(...cards.map((c) => c.figure ?? c));
  return grid;
}
