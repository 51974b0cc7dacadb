// Section state in the URL's query string, one prefix per section ("kr.sigma=0.4"), so a link
// reproduces what a visitor sees. Values equal to their defaults are left out; the URL is
// rewritten with history.replaceState (no history entry per slider step).

const params = new URLSearchParams(location.search);
let pending = 0;

function writeSoon() {
  clearTimeout(pending);
  pending = setTimeout(() => {
    const query = params.toString();
    const url = `${location.pathname}${query ? `?${query}` : ''}${location.hash}`;
    history.replaceState(history.state, '', url);
  }, 120);
}

function parse(text, fallback) {
  if (text === null) return fallback;
  if (typeof fallback === 'number') {
    const n = Number(text);
    return Number.isFinite(n) ? n : fallback;
  }
  if (typeof fallback === 'boolean') return text === '1' || text === 'true';
  return text;
}

const format = (value) => (typeof value === 'boolean' ? (value ? '1' : '0') : String(value));

/**
 * defaults: { key: number | boolean | string }. Returns { values, set(patch), href() }:
 * `values` holds the current state (read from the URL at first), `set` updates it and the URL,
 * `href()` is a link to this section with only its own state.
 */
export function urlState(prefix, defaults, sectionId) {
  const values = {};
  for (const [key, fallback] of Object.entries(defaults)) {
    values[key] = parse(params.get(`${prefix}.${key}`), fallback);
  }
  function set(patch) {
    for (const [key, value] of Object.entries(patch)) {
      if (!(key in defaults)) throw new Error(`urlState(${prefix}): unknown key ${key}`);
      values[key] = value;
      if (format(value) === format(defaults[key])) params.delete(`${prefix}.${key}`);
      else params.set(`${prefix}.${key}`, format(value));
    }
    writeSoon();
  }
  function href() {
    const own = new URLSearchParams();
    for (const [name, value] of params) if (name.startsWith(`${prefix}.`)) own.set(name, value);
    const query = own.toString();
    return `${location.pathname}${query ? `?${query}` : ''}#${sectionId}`;
  }
  return { values, set, href };
}
