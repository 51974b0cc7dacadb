// Work that can wait until the reader gets close: `callback` runs once, the first time `element`
// comes within `margin` of the viewport (a CSS margin; '100% 0px' is a screen above and below),
// and at once where IntersectionObserver is missing.

/** Runs callback() once `element` is near the viewport. */
export function whenNear(element, callback, margin = '100% 0px') {
  if (typeof IntersectionObserver === 'undefined') {
    callback();
    return;
  }
  const observer = new IntersectionObserver((entries) => {
    if (!entries.some((entry) => entry.isIntersecting)) return;
    observer.disconnect();
    callback();
  }, { rootMargin: margin });
  observer.observe(element);
}
