// A seq2seq section's training worker (each section starts one of its own): it owns the package,
// the task's data and the models, so the page never waits on a training step. This file is its message protocol; what each message
// does is in training-session.js, which trains in slices (training-loop.js) so pause,
// translate and reset requests are answered within one slice.
//
// page → worker: { type: 'init', task, seed, kind, modelBase }  load + shipped model
//                { type: 'start' }   train from scratch (fresh weights from the seed)
//                { type: 'pause' } | { type: 'resume' } | { type: 'reset' } (back to the kind's shipped model)
//                { type: 'config', task?, seed?, kind? }  stops training; task or kind reloads
//                { type: 'translate', id, texts }
//                { type: 'compare', epochs, kinds }  trains fresh models of `kinds` side by side
// worker → page: { type: 'heartbeat' }  every second while init loads (workers/heartbeat.js)
//                { type: 'state', state, run, task, kind, shipped?, epochs? }
//                { type: 'progress', run, steps, epoch, loss, tokensPerSecond, seconds }
//                { type: 'eval', run, steps, seconds, bleu, exact, byLength }
//                { type: 'probe', run, steps, result }  the probe's translation, a Transformer's every head
//                { type: 'translation', id, run, results }
//                { type: 'compare-progress', epoch, epochs }
//                { type: 'compare', epochs, seed, results: { kind: { attention, steps, bleu, exact, byLength, long } } }
//                { type: 'error', message }

import { heartbeatWhile } from '../../workers/heartbeat.js';
import * as session from './training-session.js';

const HANDLERS = {
  // The page replaces a worker that falls silent while it loads (watched-worker.js).
  init: (m) => heartbeatWhile(session.init(m)),
  start: () => session.start(),
  pause: () => session.pause(),
  resume: () => session.resume(),
  reset: () => session.reset(),
  config: ({ type, ...patch }) => session.configure(patch),
  translate: (m) => session.translate(m.id, m.texts),
  compare: (m) => session.compareModels(m.epochs, m.kinds),
};

addEventListener('message', async ({ data: message }) => {
  try {
    await HANDLERS[message.type]?.(message);
  } catch (error) {
    session.reportError(error);
  }
});
