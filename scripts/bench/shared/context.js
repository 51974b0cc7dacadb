// What every section's run(context) is given, made once per process (run.js) or per section run
// alone (standalone.js). The loads are made on first use, so that a section that needs none
// (threads, engines: their runners are child processes and browsers) loads nothing:
//   quick      --quick: small sizes only;
//   options    the command line's other options, for a section that declares some (engines);
//   log        where a section's lines go;
//   builds()   our three single-thread loads { simd (with relaxed SIMD), simd128, scalar } and
//              simdMemory (the first's WebAssembly.Memory);
//   peers()    the attention peers (peers/peers.js), each checked against the reference;
//   loadFresh  a fresh instance with its memory, for the heap a run needed;
//   earlier    what the sections run before this one returned, by name (peak and long read
//              sdpa's results).
import { loadPeers } from '../peers/peers.js';
import { loadFresh } from './fresh.js';

/** Our three loads as every table names them. */
export const OURS = Object.freeze({ simd: 'ours: wasm relaxed SIMD', simd128: 'ours: wasm SIMD128', scalar: 'ours: wasm scalar' });

async function loadBuilds() {
  const { attn: simd, memory: simdMemory } = await loadFresh();
  if (simd.backend !== 'wasm-simd') throw new Error(`the SIMD build did not load (backend ${simd.backend})`);
  if (!simd.relaxedSimd) throw new Error('relaxed SIMD did not load: Node 20 needs --experimental-wasm-relaxed-simd (npm run bench passes it)');
  const { attn: simd128 } = await loadFresh({ relaxedSimd: false });
  const { attn: scalar } = await loadFresh({ simd: false });
  return { simd, simd128, scalar, simdMemory };
}

// A promise made on the first call and shared by every later one.
const once = (make) => {
  let promise;
  return () => (promise ??= make());
};

export function createContext({ quick = false, options = {}, log = console.log } = {}) {
  return { quick, options, log, builds: once(loadBuilds), peers: once(() => loadPeers({ log })), loadFresh, earlier: {} };
}
