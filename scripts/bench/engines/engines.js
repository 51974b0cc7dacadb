// Firefox (SpiderMonkey) and WebKit (JavaScriptCore) against Chromium (V8) on the same machine,
// in one run: the 2x16 GEMM micro-kernel loop (SIMD128 and relaxed SIMD) and the fused attention
// through the package (one thread, relaxed SIMD on and off, n = 512 and 1024, d = 64), each in a
// small page (engines/page.js) served from the repository's root and opened in the browsers of
// the e2e tests (tests/e2e/browser.js). WebKit does not validate relaxed SIMD (browser.js), so
// its runs are the SIMD128 ones. The samples are taken in turns, engine after engine, runner
// after runner, round after round (every other one backwards), so that the other work of a
// shared machine falls on every engine and runner alike; the figures are medians, the ratios an
// engine's speed ÷ Chromium's (Chromium's median time ÷ the engine's).
// The fused forward is also timed in parts, outside the package: one step of it (64 queries
// against a block of 128 keys) and its score loop, softmax step and pooling loop alone
// (cpp/bench/attention_block_module.cpp), to tell which part an engine runs slower. And a
// training step of the page's two translation models through the package (SIMD128, one thread
// on the page's main thread), to tell an engine's speed at training from its speed at attention.
// Alone (after `npm run build:wasm`): `node scripts/bench/engines/engines.js [--quick]
// [--variants] [--samples N] [--only REGEX] [--engines LIST] [--baseline DIR]
// [--firefox-pref NAME=VALUE ...]` (the options are in `section.options` below); `npm run bench`
// runs it as a section.
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { launchBrowser, relaxedSimd, watchErrors } from '../../../tests/e2e/browser.js';
import { median } from '../../../web/shared/timing.js';
import { serve } from '../../serve.js';
import { measured } from '../goals.js';
import { SIZES as SEQ2SEQ_SIZES } from '../training/seq2seq.js';
import { SIZES as TRANSFORMER_SIZES } from '../training/transformer.js';
import { buildBenchTarget } from '../shared/microkernel.js';
import { runAlone } from '../shared/standalone.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ENGINES = ['chromium', 'firefox', 'webkit'];
const NAMES = { chromium: 'Chromium', firefox: 'Firefox', webkit: 'WebKit' };
const D = 64;
const SAMPLE_MS = 100;

const microkernels = [['SIMD128', 'simd128'], ['relaxed SIMD', 'relaxed']].map(([label, build]) => ({
  id: `micro-kernel 2x16, ${label}`, spec: { kind: 'microkernel', build, d: D },
}));
// With --variants: other forms of the same loop (cpp/bench/microkernel_variants.hpp).
const variants = ['indexed', 'shuffle'].flatMap((form) => [['SIMD128', 'simd128'], ['relaxed SIMD', 'relaxed']]
  .map(([label, build]) => ({
    id: `micro-kernel 2x16 ${form}, ${label}`, spec: { kind: 'microkernel', build, d: D, entry: `microkernel_loop_${form}` },
  })));
// The fused forward's step and its parts, SIMD128 (cpp/bench/attention_block_module.cpp).
const blockParts = [['step', 7], ['scores', 1], ['softmax step', 2], ['pooling', 4]].map(([label, parts]) => ({
  id: `fused step 64x128, ${label}`, spec: { kind: 'block', parts },
}));
const attention = (sizes) => sizes.flatMap((n) => [true, false].map((relaxed) => ({
  id: `SDPA n = ${n}, ${relaxed ? 'relaxed SIMD' : 'SIMD128'}`, spec: { kind: 'sdpa', relaxed, n, d: D },
})));
// A training step of the page's two translation models at the training sections' small size
// (scripts/bench/training/), SIMD128: what the page's training runs between two draws.
const small = (sizes) => sizes.find(({ label }) => label === 'small');
const training = [['Seq2SeqAttention', 'Seq2Seq', SEQ2SEQ_SIZES], ['Transformer', 'Transformer', TRANSFORMER_SIZES]]
  .map(([model, label, sizes]) => {
    const { config, batch, steps } = small(sizes);
    return { id: `${label} training step (small), SIMD128`, spec: { kind: 'train', model, config, batch, steps, relaxed: false } };
  });
// With --baseline DIR: the same step and attention from another build, to time a change of the
// kernels against what it replaces in one run. DIR holds a copy of dist/ and of
// attention_block_simd128.wasm from before the change (served from the repository, so inside it).
const baselineOf = (runners, dir) => runners.filter(({ spec }) => spec.kind === 'sdpa' || spec.parts === 7)
  .map(({ id, spec }) => ({
    id: `${id} (baseline)`,
    spec: spec.kind === 'sdpa' ? { ...spec, dist: `/${dir}/dist` } : { ...spec, module: `/${dir}/attention_block_simd128.wasm` },
  }));

// Whether `engine` runs `spec`: a relaxed-SIMD runner needs an engine that validates it.
const runsIn = (spec, engine) => relaxedSimd(engine) || !(spec.build === 'relaxed' || spec.relaxed);

// Opens the page in each of `engines`: { engine, page, version, errors, close }.
async function openEngines(base, engines, firefoxPrefs) {
  const opened = [];
  for (const engine of engines) {
    const browser = await launchBrowser(engine, engine === 'firefox' ? { extraPrefsFirefox: firefoxPrefs } : {});
    const page = await browser.newPage();
    const errors = watchErrors(page);
    await page.goto(`${base}scripts/bench/engines/index.html`);
    await page.waitForFunction(() => window.engineBench !== undefined, null, { timeout: 15000 });
    const version = await page.evaluate(() => window.engineBench.engine);
    opened.push({ engine, page, version, errors, close: () => browser.close() });
  }
  return opened;
}

/**
 * Times `runners` ({ id, spec }) in `engines` (Chromium first): per runner and engine that runs it
 * { id, engine, ms, gflops } (medians of `samples`), with the machine's load average before and
 * after.
 */
async function measure(runners, { engines: names, samples, firefoxPrefs }) {
  const server = await serve(ROOT);
  const engines = await openEngines(`http://127.0.0.1:${server.address().port}/`, names, firefoxPrefs);
  const load = { before: loadavg() };
  const pairs = (runner) => engines.filter(({ engine }) => runsIn(runner.spec, engine));
  try {
    const flops = new Map();
    for (const runner of runners) {
      for (const { page } of pairs(runner)) {
        const { id, spec } = runner;
        const { flops: f } = await page.evaluate((a) => window.engineBench.prepare(a.id, a.spec, a.sampleMs), { id, spec, sampleMs: SAMPLE_MS });
        flops.set(id, f);
      }
    }
    const times = new Map();
    for (let s = 0; s < samples; s++) {
      // Every other round backwards, so that no runner always follows the same one.
      for (const runner of s % 2 ? [...runners].reverse() : runners) {
        for (const { engine, page } of pairs(runner)) {
          const key = `${runner.id}|${engine}`;
          times.set(key, [...(times.get(key) ?? []), await page.evaluate((i) => window.engineBench.sample(i), runner.id)]);
        }
      }
    }
    load.after = loadavg();
    for (const { engine, errors } of engines) {
      if (errors.length) throw new Error(`${engine}: errors in the page: ${errors.join(' | ')}`);
    }
    const results = runners.flatMap((runner) => pairs(runner).map(({ engine }) => {
      const ms = median(times.get(`${runner.id}|${engine}`));
      return { id: runner.id, engine, ms, gflops: flops.get(runner.id) / ms / 1e6 };
    }));
    return { results, load, versions: Object.fromEntries(engines.map((e) => [e.engine, e.version])) };
  } finally {
    for (const { close } of engines) await close();
    server.close();
  }
}

/** Measures the runners the options select: { results, tables, notes, goals } like every section. */
async function runEngines({ quick, variants: withVariants, firefoxPrefs = {}, baseline, only, samples: asked, engines = ENGINES }) {
  buildBenchTarget('microkernel_simd128');
  buildBenchTarget('relaxed_microkernel');
  buildBenchTarget('attention_block_simd128');
  const ours = [...microkernels, ...(withVariants ? variants : []), ...blockParts, ...attention(quick ? [512] : [512, 1024]), ...training];
  const runners = (baseline ? [...ours, ...baselineOf(ours, baseline)] : ours).filter(({ id }) => !only || only.test(id));
  const samples = asked ?? (quick ? 7 : 15);
  const { results, load, versions } = await measure(runners, { engines, samples, firefoxPrefs });
  const at = (id, engine) => results.find((r) => r.id === id && r.engine === engine);
  // An engine's speed over Chromium's (the GFLOP/s ratio, and the same for a part without flops);
  // null where the engine does not run the runner.
  const ratio = (id, engine) => (at(id, engine) ? at(id, 'chromium').ms / at(id, engine).ms : null);
  const others = engines.filter((engine) => engine !== 'chromium');
  const cell = (value, format) => (value === null || value === undefined ? '—' : format(value));
  const table = {
    title: `${others.map((e) => NAMES[e]).join(' and ')} against Chromium, one thread: ms per call and GFLOP/s (medians of ${samples} samples taken in turns; — where the engine has no relaxed SIMD)`,
    header: ['runner', ...engines.map((e) => `${NAMES[e]} ms`), ...engines.map((e) => `${NAMES[e]} GFLOP/s`),
      ...others.map((e) => `${NAMES[e]} ÷ Chromium`)],
    rows: runners.map(({ id }) => [id,
      ...engines.map((e) => cell(at(id, e)?.ms, (ms) => ms.toFixed(3))),
      ...engines.map((e) => cell(at(id, e)?.gflops, (g) => (g ? g.toFixed(1) : '—'))),
      ...others.map((e) => cell(ratio(id, e), (r) => r.toFixed(2)))]),
  };
  const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(', ');
  const notes = [...Object.entries(versions).map(([e, v]) => `${e}: ${v}`),
    `load average (1, 5, 15 min) before: ${fmtLoad(load.before)}; after: ${fmtLoad(load.after)}`];
  const GOAL = { firefox: 'firefoxVsChromium', webkit: 'webkitVsChromium' };
  const goals = others.flatMap((engine) => runners
    .filter(({ id, spec }) => id.startsWith('SDPA') && !id.endsWith('(baseline)') && runsIn(spec, engine))
    .map(({ id }) => measured(GOAL[engine], id.replace(/^SDPA /, ''), ratio(id, engine))));
  return { results: { results, load, versions, samples, firefoxPrefs }, tables: [table], notes, goals };
}

// --firefox-pref NAME=VALUE (repeatable): a preference for Firefox, e.g. one of its wasm JIT's
// javascript.options.wasm_* switches, to see what it changes, its value a boolean, a number or a
// string. --baseline DIR: see baselineOf. --only REGEX: the runners whose name matches.
// --samples N: rounds of samples. --variants: see variants. --engines LIST: a comma-separated
// list of Chromium (always included: the ratios' denominator), firefox and webkit.
function readEngines(list) {
  const asked = list.split(',');
  for (const engine of asked) {
    if (!ENGINES.includes(engine)) throw new RangeError(`--engines: expected names among ${ENGINES}, got ${engine}`);
  }
  return ENGINES.filter((engine) => engine === 'chromium' || asked.includes(engine));
}
const prefValue = (v) => (v === 'true' || v === 'false' ? v === 'true' : Number.isNaN(Number(v)) ? v : Number(v));

const section = {
  name: 'engines',
  options: {
    variants: { type: 'boolean' }, baseline: { type: 'string' }, only: { type: 'string' }, samples: { type: 'string' },
    'firefox-pref': { type: 'string', multiple: true }, engines: { type: 'string' },
  },
  run: ({ quick, options }) => runEngines({
    quick,
    variants: options.variants,
    firefoxPrefs: Object.fromEntries((options['firefox-pref'] ?? []).map((p) => {
      const [name, value] = p.split('=');
      return [name, prefValue(value)];
    })),
    baseline: options.baseline?.replace(/\/$/, ''),
    only: options.only && new RegExp(options.only),
    samples: options.samples && Number(options.samples),
    engines: options.engines && readEngines(options.engines),
  }),
};
export default section;

await runAlone(import.meta, section);
