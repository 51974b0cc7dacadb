// The threads a section's training worker loads the package on: one. The page's models are small
// (d2l's sizes), so a training step is hundreds of short calls, each too short to share; the
// page's main thread draws meanwhile, and a pool's threads then wait for cores more than they
// work. Measured on a 2-core VM (2026-11-28, Chromium 156 and WebKitGTK 2.50): section 6's
// Transformer trained from scratch took 1.2x (Chromium) and 2.8x (WebKit) the steps in its first
// ~17 s on one thread that it took on the pool of both cores, and section 7's model reached its
// phase change in 9.8 s instead of 11.1 (Chromium) and 15.1 instead of 19.5 (WebKit). The
// single-thread build also spares the worker the nested workers a pool starts
// (watched-worker.js).
export const TRAINING_THREADS = 1;
