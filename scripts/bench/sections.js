// The sections of `npm run bench`, in the order run.js runs them. Each is a module whose default
// export is { name, run(context), options? }: run gets the context of shared/context.js and
// returns { results (for results.json), tables?, notes?, goals? (measurements of goals.js's
// goals) }; each file also runs alone (shared/standalone.js). To add one: write the module, add
// its goals to goals.js, and list it here.
//
// The order matters where sections share a process: the single-thread sections first; long
// sequences last of them (a peer that fails at n = 32768 may be unusable afterwards); threads
// (a process per thread count), contention (busy loops beside our threads) and engines (the
// browsers) after every Node section, so that no worker of ours or of a peer runs beside the
// single-thread timings. peak and long read the sdpa
// section's results from context.earlier.
import backward from './attention/backward.js';
import decode from './attention/decode.js';
import long from './attention/long.js';
import masked from './attention/masked.js';
import mha from './attention/mha.js';
import modern from './attention/modern.js';
import peak from './attention/peak.js';
import primitives from './attention/primitives.js';
import regression from './attention/regression.js';
import sdpa from './attention/sdpa.js';
import weights from './attention/weights.js';
import engines from './engines/engines.js';
import contention from './threads/contention.js';
import scaling from './threads/scaling.js';
import threads from './threads/threads.js';
import causalLM from './training/causal-lm.js';
import seq2seq from './training/seq2seq.js';
import transformer from './training/transformer.js';

export const SECTIONS = [sdpa, mha, backward, masked, modern, regression, primitives, weights, decode, peak, seq2seq, transformer, causalLM, long, threads, contention, scaling, engines];
