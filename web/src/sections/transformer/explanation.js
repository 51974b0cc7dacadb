// Section 6's explanation, HTML with TeX (typeset by ui/math.js): d2l 11.7's Transformer (its
// blocks, multi-head attention, positional encoding, AddNorm and FFN), what its heads show, what
// ships with the page and how it decodes (a KV cache per decoder block).

import { EPOCHS, MODELS } from '../../../shared/translation/trainer.js';

const { model: M, training: T } = MODELS.transformer;

export const TEXT = `
<p>The Transformer (Vaswani et al., 2017, “Attention is all you need”; d2l 11.7) keeps the
encoder–decoder of <a href="#bahdanau">section 5</a> and drops its recurrence: every layer
that mixes positions is attention. Attention alone cannot tell the order of its inputs, so the
encoder scales each source token's embedding by $\\sqrt{d}$ and adds a sinusoidal positional
encoding, $p_{i,2j} = \\sin(i / 10000^{2j/d})$ and $p_{i,2j+1} = \\cos(i / 10000^{2j/d})$ at
position $i$. Then come $N$ <strong>encoder blocks</strong>, each multi-head self-attention
followed by a position-wise feed-forward network (FFN), each of the two wrapped in a residual
connection and layer normalisation (AddNorm):
$$\\operatorname{head}_h = \\operatorname{softmax}\\Big(\\frac{X W_q^{(h)} (X W_k^{(h)})^\\top}{\\sqrt{d/H}}\\Big)\\, X W_v^{(h)},$$
$$\\operatorname{MHA}(X) = [\\operatorname{head}_1, \\dots, \\operatorname{head}_H]\\, W_o,$$
$$\\operatorname{AddNorm}(X, Y) = \\operatorname{LayerNorm}(X + \\operatorname{dropout}(Y)),$$
$$\\operatorname{FFN}(x) = W_2 \\operatorname{ReLU}(W_1 x + b_1) + b_2.$$
Each of the $H$ heads scores with its own projections, so each can attend to something else. A
<strong>decoder block</strong> has three such layers: masked self-attention over the output so far
(a position sees only those before it), cross-attention — queries from the decoder, keys and
values the encoder's output, the alignment of section 5 — and the FFN, each followed by AddNorm;
a dense layer turns the last block's output into the next word's scores.</p>
<p>Here it trains in your browser, in a Web Worker of its own, on the same generated pairs as
section 5: $N = ${M.numBlks}$ blocks on each side of width $d = ${M.numHiddens}$, $H = ${M.numHeads}$ heads
of ${M.numHiddens / M.numHeads} dimensions each, an FFN of ${M.ffnNumHiddens} hidden units, no dropout;
Adam (learning rate ${T.lr}, gradients clipped to norm ${T.clip}), batches of ${T.batchSize} pairs,
${EPOCHS} passes. A Transformer trained the same way ships with the page for every task, so it
translates at once; “Train from scratch” learns again from random weights (from the seed), and
“Reset” returns to the shipped one.</p>
<p>Nobody tells a head what to attend to. The probe's heatmap is the mean over the last block's
cross-attention heads; under it is every head of every block, the encoder's self-attention (each
source word over the source) and the decoder's cross-attention (each output word over the
source), redrawn as the model learns, each settling on a pattern of its own. Greedy
translation keeps each decoder block's keys and values in a KV cache, so every new word costs
one query's attention in each layer rather than a run of the decoder over the whole prefix. The BLEU chart draws, dashed, the last Bahdanau run trained in section 5
on the same task: the same browser on the same machine, so the seconds compare.</p>`;
