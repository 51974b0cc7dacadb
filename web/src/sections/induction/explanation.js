// Section 7's explanation, HTML with TeX (typeset by ui/math.js): what an induction head is,
// the two-head circuit (drawn as an SVG), Olsson et al.'s two scores, the task and why it is
// this task, and what ships with the page.

import { MODEL, OPTIMISER, TASK } from './task.js';

// The circuit on "… A B … A → B": the layer-0 head writes "my previous token was A" into B's
// position; the layer-1 head at the second A finds that position and copies B.
const CIRCUIT = `
<svg class="circuit" viewBox="0 0 420 165" role="img" aria-label="The induction circuit: at the second A, a layer-1 head attends to the token after the first A, B, found through what a layer-0 head wrote there (its previous token, A), and predicts B">
  <g font-size="14" text-anchor="middle" font-family="inherit">
    <text x="40" y="130">…</text><text x="90" y="130">A</text><text x="140" y="130">B</text>
    <text x="200" y="130">…</text><text x="260" y="130">A</text><text x="330" y="130" fill="#2a6f97">→ B</text>
  </g>
  <path d="M140 112 C 130 92, 100 92, 92 112" fill="none" stroke="#c9733a" stroke-width="2" marker-end="url(#arrow-o)"/>
  <text x="115" y="156" font-size="11" text-anchor="middle" fill="#c9733a">layer 0: previous token</text>
  <path d="M260 112 C 240 30, 160 30, 144 108" fill="none" stroke="#2a6f97" stroke-width="2" marker-end="url(#arrow-b)"/>
  <text x="205" y="26" font-size="11" text-anchor="middle" fill="#2a6f97">layer 1: prefix matching (query A, key “after A”)</text>
  <defs>
    <marker id="arrow-o" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0 0 L10 5 L0 10 z" fill="#c9733a"/></marker>
    <marker id="arrow-b" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0 0 L10 5 L0 10 z" fill="#2a6f97"/></marker>
  </defs>
</svg>`;

export const TEXT = `
<p>Language models continue text by copying: having seen “Mr Dursley … Mr” they expect
“Dursley”. Olsson et al. (2022, “In-context learning and induction heads”) found the circuit
that does it, already in a transformer of two attention-only layers: an <strong>induction
head</strong>. A head in layer 0 attends to the <em>previous</em> token and writes what it saw
into each position; a head in layer 1, at a token $A$, then attends to positions whose
previous token was $A$, i.e. to the token just after an earlier $A$, and copies it. Neither
head can do this alone: the layer-1 head's keys are what the layer-0 head wrote (K-composition).</p>
${CIRCUIT}
<p>Here a 2-layer, attention-only decoder (the package's <code>CausalLM</code>: width
${MODEL.hiddenSize}, ${MODEL.numHeads} heads per layer, rotary positions, no MLP) learns
sequences of ${TASK.length + 1} random tokens from a vocabulary of ${TASK.vocabSize} that end in
a segment of ${TASK.minSegment}–${TASK.maxSegment} tokens and its repeat. The first
occurrence of a segment is unpredictable (its loss stays near $\\ln ${TASK.vocabSize} \\approx
${Math.log(TASK.vocabSize).toFixed(2)}$ nats); the repeat is predictable only by copying. The
segment's length varies per sequence on purpose: with one fixed repeat distance, a model
copies from $i - \\text{distance}$ by position alone and no induction head forms. Training is
AdamW (lr ${OPTIMISER.lr}, weight decay ${OPTIMISER.weightDecay}, gradients clipped to norm
${OPTIMISER.clip}, batches of ${TASK.batch}) from GPT-2's initialisation; in a PyTorch
calibration of this set-up rotary positions formed the circuit in 700–750 steps, learned
absolute positions in none of 3000.</p>
<p>Two scores, measured on a probe of ${TASK.length / 2} distinct random tokens repeated once,
tell the heads apart. With $a^{(h)}_{ij}$ head $h$'s weight from query $i$ on key $j$ and
$n = ${TASK.length / 2}$,
$$\\text{previous token}_h = \\operatorname{mean}_{i \\ge 1}\\, a^{(h)}_{i,\\,i-1}, \\qquad
\\text{prefix matching}_h = \\operatorname{mean}_{i \\ge n}\\, a^{(h)}_{i,\\,i-n+1}.$$
The learning is not gradual: for hundreds of steps the repeated tokens are as hard as the
first occurrences; then, within a few hundred steps, both scores rise together and the loss on
repeats collapses, a <strong>phase change</strong> (marked where the repeats' loss first falls to
half the first occurrences'). Ablate a head (its weights times 0, Hugging Face's
<code>head_mask</code>) to see the circuit need both: without the layer-0 previous-token head
the layer-1 head no longer finds the prefix. The model that loads with the page was trained by
<code>scripts/train-induction-model.js</code>; its curves are that run's.</p>`;
