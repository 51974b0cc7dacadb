// Section 7's explanation, HTML with TeX (typeset by ui/math.js): what is timed, how, and what
// the masked and decode rows measure.

import { JS_MAX_N, SAMPLE_MS, SAMPLES } from './compute.js';
import { DECODE } from './decode.js';

export const TEXT = `
<p>How fast is attention here, on this device? The button below times one call of the package's
<code>scaledDotProductAttention(q, k, v)</code>, that is
$O = \\operatorname{softmax}\\!\\big(QK^\\top/\\sqrt d\\big)\\,V$ with $Q, K, V$ of shape
$[1, n, d]$ in float32 (self-attention sized: $n$ queries against $n$ keys), in three ways: the
package's WebAssembly build with 128-bit SIMD (twice where your browser has relaxed SIMD: see
below), its scalar build (the same C++ compiled without
SIMD) and plain JavaScript (the obvious loops over <code>Float32Array</code>s). The wasm call runs
the <strong>fused kernel</strong>: scores a block of 128 keys at a time, softmaxed online and pooled into
the output at once, so no $n \\times n$ matrix is ever stored; the time includes copying $Q, K, V$
into wasm memory and the output back.</p>
<p>Everything runs in a Web Worker, so this page keeps drawing while it measures, and on
<strong>one thread</strong> but the row "SIMD, all threads": the same SIMD build on every logical
core up to 8, where the page is served cross-origin isolated (the threads share the query blocks;
the results are the same bits as on one thread). Each figure is the median of ${SAMPLES} samples after a warm-up, each sample
repeating the call until it lasts at least ${SAMPLE_MS} ms; at each $n$ the runners take their
samples in turns, so a slow moment of the device falls on all of them alike. Throughput counts the two matrix
products, $2n^2d$ flops each (the exponentials are not counted):
$$\\text{GFLOP/s} = \\frac{4\\,n^2 d}{\\text{time}}.$$
Plain JS stops at $n = ${JS_MAX_N}$ to keep the run short. These are <strong>your own
numbers</strong>, measured just now in your browser; nothing is sent anywhere. They vary with the
device, its power state and what else is running: run it twice.</p>
<p>Where your browser has relaxed SIMD, the SIMD row's products use its <strong>fused
multiply-add</strong> (one instruction and one rounding for $a \\cdot b + c$), and the row
"SIMD, no FMA" times the same build with SIMD128's separate multiply and add.</p>
<p>Two more rows time the SIMD build with a <strong>causal mask</strong> (query $i$ sees keys
$j \\le i$) and with <code>validLens</code> $= n/4$: the kernel skips key blocks that are wholly
masked, so these should take about a half and a quarter of the unmasked time. They are counted
with the same $4n^2d$ flops, so their ratio to the SIMD row is how much time the mask saves. Last,
<strong>decode</strong>: one new token's query per head against $n$ cached keys and values kept in
wasm memory (<code>attn.KVCache</code>, ${DECODE.heads} heads, $d = ${DECODE.d}$), beside the time
of merely copying those keys and values once.</p>`;
