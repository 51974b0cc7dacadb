// measureInTurns (web/shared/timing.js), which the page's benchmark and `npm run bench` time
// with: samples in turns, and before()/after() run around each sample outside its time (the
// threads section starts and stops copies running beside a sample with them).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

const { measureInTurns } = await import(pathToFileURL(join(process.env.ATTN_REPO, 'web/shared/timing.js')));

const busy = (ms) => {
  for (const start = performance.now(); performance.now() - start < ms;);
};

test('measureInTurns: before() and after() wrap every sample, outside its time, in turns with the other entries', async () => {
  const events = [];
  const hooked = {
    fn: () => { events.push('call'); busy(2); },
    before: () => { events.push('before'); busy(50); },
    after: async () => { events.push('after'); busy(50); },
  };
  const plain = { fn: () => { events.push('plain'); busy(2); } };
  const [timed, other] = await measureInTurns([hooked, plain], { samples: 3, sampleMs: 5 });
  // 50 ms on either side of every sample would make a 2 ms call look 25 ms or more.
  assert.ok(timed.ms >= 2 && timed.ms < 20, `a hooked call timed at ${timed.ms} ms, expected about 2`);
  assert.ok(other.ms >= 2 && other.ms < 20, `a plain call timed at ${other.ms} ms, expected about 2`);
  // Every sample's time, in round order, of which ms is the median and best the least.
  for (const entry of [timed, other]) {
    assert.equal(entry.times.length, 3);
    assert.equal(entry.ms, [...entry.times].sort((a, b) => a - b)[1]);
    assert.equal(entry.best, Math.min(...entry.times));
  }
  // Every run of hooked calls sits between its own before and after; plain calls never do.
  let inside = false;
  for (const event of events) {
    if (event === 'before') { assert.equal(inside, false, 'before() ran twice without after()'); inside = true; }
    else if (event === 'after') { assert.equal(inside, true, 'after() ran without before()'); inside = false; }
    else assert.equal(inside, event === 'call', `${event} ran ${inside ? 'inside' : 'outside'} a hooked sample`);
  }
  assert.equal(inside, false);
  // Warm-up, sizing (reps double from 1 until a sample lasts 5 ms) and the 3 samples, each wrapped.
  const samples = events.filter((e) => e === 'before').length;
  assert.ok(samples >= 2 + 3, `${samples} hooked samples, expected the warm-up, the sizing and 3 more`);
  // In turns: a plain sample falls between the hooked entry's last two.
  const last = events.lastIndexOf('before'), previous = events.lastIndexOf('before', last - 1);
  assert.ok(events.slice(previous, last).includes('plain'), 'the entries were not timed in turns');
});
