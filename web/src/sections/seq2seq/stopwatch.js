// Training time with paused time excluded, for the seconds axis of the BLEU curve: time runs
// between start() and stop() and adds up across pauses.
export class Stopwatch {
  #seconds = 0;
  #since = null;

  /** Seconds counted so far, including the current stretch if running. */
  get seconds() {
    return this.#seconds + (this.#since === null ? 0 : (performance.now() - this.#since) / 1000);
  }

  start() {
    this.#since = performance.now();
  }

  stop() {
    this.#seconds = this.seconds;
    this.#since = null;
  }
}
