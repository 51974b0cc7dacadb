// A redraw for updates that arrive in bursts (many worker messages in one task): however often
// schedule() is called, draw() runs once, at the next animation frame, so a burst never holds
// the main thread for more than one redraw.

/** { schedule(): draw at the next frame, flush(): draw now if one is scheduled }. */
export function oncePerFrame(draw) {
  let pending = false;
  const flush = () => {
    if (!pending) return;
    pending = false;
    draw();
  };
  const schedule = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(flush);
  };
  return { schedule, flush };
}
