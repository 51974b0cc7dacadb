// A seeded property fuzzer over the public API, in the three builds. Each case draws a function
// (api-fuzz-cases.js) with random valid arguments, then either calls it as drawn, or with one
// argument in a hostile but valid form (a typed-array subclass or another realm's array, a
// Proxy, getters and shape elements that answer differently on a second read, a Node Buffer
// mask), or with one argument made invalid (wrong type, wrong shape, NaN, lengths out of range,
// a detached buffer, a getter that detaches another argument's memory). The property:
//   valid   -> the result matches the double-precision reference (harness/reference.js), in
//              fresh arrays;
//   invalid -> a TypeError or RangeError whose message starts with the argument's name;
// never another error kind, never a silent answer to an invalid call, and the module keeps
// computing afterwards. Bounded by ATTN_FUZZ_SECONDS per build (default 8); prints its seed
// (ATTN_FUZZ_SEED reruns one; the same seed draws the same cases in the three builds).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BUILDERS, chooser } from './api-fuzz-cases.js';
import { backends, memoryOf, labelOf } from './backends.js';
import { detach, validForm } from './hostile.js';
import * as ref from '../../harness/reference.js';
import { fuzzSeed } from './fuzz-seed.js';

const seed = fuzzSeed();
const BUDGET_MS = 1000 * Number(process.env.ATTN_FUZZ_SECONDS ?? 8);
const TOTAL_WEIGHT = BUILDERS.reduce((sum, [, weight]) => sum + weight, 0);

function drawBuilder(rng) {
  let left = rng() * TOTAL_WEIGHT;
  for (const [builder, weight] of BUILDERS) {
    left -= weight;
    if (left < 0) return builder;
  }
  return BUILDERS[0][0];
}

// A copy of args with the value at `path` replaced; the objects along the path are copied, so the
// case's own arguments (which its check reads) stay as drawn.
function replaced(args, [index, key], value) {
  const copy = [...args];
  if (key === undefined) copy[index] = value;
  else copy[index] = { ...(copy[index] ?? {}), [key]: value };
  return copy;
}

const DELIMITERS = [':', '.', '['];
const startsWithName = (message, name) => message.startsWith(name) && DELIMITERS.includes(message[name.length]);

// The typed array holding a slot's values (a bare typed array or a tensor's data).
const arrayOf = (value) => (ArrayBuffer.isView(value) ? value : value?.data);

/**
 * How a case is called: { mode, args, form, expect } with expect null (valid) or
 * { blame: [names], kind? }.
 */
function variant(c, kase) {
  const roll = c.rng();
  const hostile = kase.slots.filter((slot) => slot.hostile && slot.value != null);
  if (roll < 0.5 || kase.slots.length === 0) return { mode: 'valid', args: kase.args, form: '', expect: null };
  if (roll < 0.68 && hostile.length) {
    const slot = c.pick(hostile);
    const { form, value } = validForm(c.rng, slot.value);
    return { mode: 'hostile', args: replaced(kase.args, slot.path, value), form: `${slot.name} as ${form}`, expect: null };
  }
  const names = [...new Set(kase.slots.map((slot) => slot.name))];
  if (roll < 0.76 && kase.mismatches.length) {
    const { path, shape } = c.pick(kase.mismatches);
    return { mode: 'mismatch', args: replaced(kase.args, path, ref.randomTensor(c.rng, shape)), form: `arg ${path} of shape [${shape}]`, expect: { blame: names, kind: RangeError } };
  }
  // validLens are copied when read (they steer which memory the core reads), so detaching them
  // later is harmless; every other array is read in place and must be caught.
  const victims = hostile.filter((slot) => arrayOf(slot.value)?.length > 0 && slot.name !== 'validLens');
  if (roll < 0.82 && victims.length >= 2) {
    // A getter on one argument detaches another argument's memory while the arguments are read.
    // The getter sits on a tensor (a bare array has no getter to hold), and any argument that
    // shares the victim's memory may be named.
    const victim = c.pick(victims);
    const buffer = arrayOf(victim.value).buffer;
    const holders = hostile.filter((s) => s !== victim && !ArrayBuffer.isView(s.value));
    if (holders.length) {
      const slot = c.pick(holders);
      const { data, shape } = slot.value;
      const value = { get data() { detach(buffer); return data; }, shape };
      const blame = hostile.filter((s) => arrayOf(s.value)?.buffer === buffer).map((s) => s.name);
      return { mode: 'detach', args: replaced(kase.args, slot.path, value), form: `${slot.name}'s getter detaches ${victim.name}`, expect: { blame, kind: TypeError } };
    }
  }
  const slot = c.pick(kase.slots.filter((s) => !s.hostileOnly));
  const bad = slot.invalid(c.rng);
  return { mode: 'invalid', args: replaced(kase.args, slot.path, bad.value), form: `${slot.name}: ${bad.form}`, expect: { blame: [bad.blame], kind: bad.kind } };
}

/** Every tensor in a result (nested objects of { data, shape }). */
function tensorsOf(result, found = []) {
  if (result && typeof result === 'object') {
    if (ArrayBuffer.isView(result.data)) found.push(result);
    else for (const value of Object.values(result)) tensorsOf(value, found);
  }
  return found;
}

for (const attn of backends) {
  test(`the public API under random valid, hostile and invalid arguments (${labelOf(attn)})`, (t) => {
    t.diagnostic(`seed ${seed} (rerun with ATTN_FUZZ_SEED=${seed}), budget ${BUDGET_MS} ms (ATTN_FUZZ_SECONDS)`);
    const memory = memoryOf(attn);
    const c = chooser(ref.mulberry32(seed));
    // A small computation rerun after every error: the module must keep working.
    const probe = [[2, 3, 4], [2, 5, 4], [2, 5, 3]].map((shape) => ref.randomTensor(ref.mulberry32(seed ^ 0x9e37), shape));
    const probeWant = ref.scaledDotProductAttention(...probe, { validLens: [2, 5] }).output;
    const stillWorks = () => ref.assertClose(attn.scaledDotProductAttention(...probe, { validLens: [2, 5] }).output, probeWant, { label: 'the module after an error' });

    const outcomes = {};
    const count = (key) => { outcomes[key] = (outcomes[key] ?? 0) + 1; };
    const started = performance.now();
    let cases = 0;
    for (; performance.now() - started < BUDGET_MS; cases++) {
      const builder = drawBuilder(c.rng);
      const kase = builder(c);
      const { mode, args, form, expect } = variant(c, kase);
      const where = `seed ${seed}, case ${cases}: ${kase.label}, ${mode}${form ? ` (${form})` : ''}`;
      let result;
      try {
        result = kase.run(attn, args);
      } catch (error) {
        const isApiError = error instanceof TypeError || error instanceof RangeError;
        assert.ok(isApiError, `${where}: threw ${error?.name}: ${error?.message}`);
        assert.ok(expect, `${where}: a valid call threw ${error.name}: ${error.message}`);
        assert.ok(expect.blame.some((name) => startsWithName(error.message, name)),
          `${where}: ${error.name} "${error.message}" does not start with ${expect.blame.join(' or ')}`);
        if (expect.kind) assert.ok(error instanceof expect.kind, `${where}: expected a ${expect.kind.name}, got ${error.name}: ${error.message}`);
        stillWorks();
        count(`${builder.name} ${error.name}`);
        continue;
      }
      assert.equal(expect, null, `${where}: accepted an invalid call (expected an error naming ${expect?.blame.join(' or ')})`);
      try {
        kase.check(attn, result);
      } catch (error) {
        error.message = `${where}: ${error.message}`;
        throw error;
      }
      for (const tensor of tensorsOf(result)) assert.notEqual(tensor.data.buffer, memory.buffer, `${where}: a result is a view of the wasm heap`);
      count(`${builder.name} ${mode}`);
    }
    const elapsed = Math.round(performance.now() - started);
    const perFunction = BUILDERS.map(([{ name }]) => `${name.replace(/Case$/, '')} ${['valid', 'hostile', 'TypeError', 'RangeError'].map((s) => outcomes[`${name} ${s}`] ?? 0).join('/')}`);
    t.diagnostic(`${cases} cases in ${elapsed} ms; per function valid/hostile/TypeError/RangeError: ${perFunction.join(', ')}`);
    // Every function and both sides of the property must have been exercised, or it proves little.
    const ran = (name, suffixes) => suffixes.reduce((sum, s) => sum + (outcomes[`${name} ${s}`] ?? 0), 0);
    const minimum = cases >= 600 ? 3 : 1;
    for (const [builder] of BUILDERS) {
      assert.ok(ran(builder.name, ['valid', 'hostile']) >= minimum, `${builder.name}: too few successful calls in ${cases} cases`);
      assert.ok(ran(builder.name, ['TypeError', 'RangeError']) >= minimum, `${builder.name}: too few rejected calls in ${cases} cases`);
    }
  });
}
