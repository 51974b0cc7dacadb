// Lets the worker answer the messages queued during a training slice before the next one. A
// MessageChannel hop is a task like a message, so it yields at once; a setTimeout(0) would be
// clamped to 4 ms after a few nestings, idling the worker for a few percent of training time.
const channel = new MessageChannel();
let pending = null;
channel.port1.onmessage = () => {
  const resolve = pending;
  pending = null;
  resolve();
};

/** Resolves after the messages already queued for the worker have been handled. */
export const yieldToMessages = () => new Promise((resolve) => {
  pending = resolve;
  channel.port2.postMessage(0);
});
