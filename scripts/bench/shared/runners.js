// Runners side by side: the attention sections hand a list of runners ({ name, make(task) → fn,
// release?, async? }: ours and the peers alike) and one task to measureRunners, which prepares
// each (make() runs it once and checks it), times them all with their samples taken in turns, so
// that a slow spell of the shared machine falls on all of them alike, and releases them.
import { measureInTurns } from '../../../web/shared/timing.js';
import { PeerMismatchError, oneLine } from './check.js';

/**
 * Returns [{ runner (its name), ms (median per call) }] for the runners that ran. A runner that
 * fails to run is skipped with a line; one that runs but disagrees with the reference throws.
 */
export async function measureRunners(list, task, label, { log = console.log, ...options } = {}) {
  const ready = [];
  try {
    for (const runner of list) {
      try {
        ready.push({ runner, fn: await runner.make(task) });
      } catch (error) {
        if (error instanceof PeerMismatchError) throw error;
        log(`${runner.name} at ${label}: skipped (${oneLine(error)})`);
        await runner.release?.();
      }
    }
    const timed = await measureInTurns(ready.map(({ runner, fn }) => ({ fn, async: runner.async })), options);
    return ready.map(({ runner }, i) => ({ runner: runner.name, ms: timed[i].ms }));
  } finally {
    for (const { runner } of ready) {
      try { await runner.release?.(); } catch (error) { log(`${runner.name}: release failed (${oneLine(error)})`); }
    }
  }
}
