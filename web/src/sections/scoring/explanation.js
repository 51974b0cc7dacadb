// Section 3's explanation, HTML with TeX (typeset by ui/math.js): the scoring functions, why
// attention divides by √d, and masked softmax.

import { HIDDEN, SAMPLES } from './compute.js';

export const SCORE_TEXT = `
<p>A scoring function $a(q, k)$ rates how well a key matches a query; a softmax turns the scores
into weights. The common ones:</p>
<ul class="formula-list">
<li>dot: $\\;q^\\top k$</li>
<li>scaled dot: $\\;q^\\top k / \\sqrt d$</li>
<li>negative squared distance: $\\;-\\tfrac12 \\lVert q - k \\rVert^2$</li>
<li>additive (Bahdanau): $\\;w_v^\\top \\tanh(W_q q + W_k k)$</li>
<li>general (Luong): $\\;q^\\top W k$</li>
</ul>
<p>The negative squared distance expands to
$-\\tfrac12 \\lVert q - k_i \\rVert^2 = q^\\top k_i - \\tfrac12 \\lVert k_i \\rVert^2 - \\tfrac12 \\lVert q \\rVert^2$.
The last term is the same for every key, and a softmax ignores anything added to all of its
inputs, so it cancels; when all keys have the same length the middle term cancels too, and
what remains is the dot product (tick <em>keys of equal length</em> and compare the bars).
And $\\operatorname{softmax}_i(-\\tfrac12 \\lVert q - k_i \\rVert^2)$ is exactly the Gaussian kernel's
weights of section 2 with $\\sigma = 1$: the readout below compares the two, both computed by the
package. Here $d = 2$; the additive score has a hidden layer of ${HIDDEN} with seeded weights,
and the general score's $W$ rotates the key by $\\varphi$.</p>`;

export const SQRT_D_TEXT = `
<h3>Why divide by $\\sqrt d$</h3>
<p>If $q$ and $k$ have independent entries with mean 0 and variance 1, then
$q^\\top k = \\sum_{j=1}^{d} q_j k_j$ has mean 0 and variance $d$: its spread grows like
$\\sqrt d$. Large scores saturate the softmax into a near one-hot whose gradients vanish.
Dividing by $\\sqrt d$ keeps the variance at 1 whatever the width. Below: ${SAMPLES} random
queries against ${SAMPLES} random keys (${SAMPLES * SAMPLES} scores) from the package's
<code>score</code> with <code>'dot'</code> and <code>'scaled-dot'</code>, then its softmax.</p>`;

export const MASK_TEXT = `
<h3>Masked softmax</h3>
<p>Sequences in a batch are padded to one length; a valid length $l_b$ says how many keys of
batch row $b$ are real. The scores of the padding keys ($j > l_b$) are replaced by a large
negative number ($-10^6$ in d2l) before the softmax, so their weights are 0 and the pooled
output $\\sum_{j=1}^{n} \\alpha_j v_j$ becomes $\\sum_{j=1}^{l_b} \\alpha_j v_j$. With $l_b = 0$ every
key is masked: a fill of $-10^6$ gives a uniform row (d2l), $-\\infty$ gives NaN (PyTorch).
d2l's example: scores of shape $2 \\times 2 \\times 10$ (batch × queries × keys), uniform in
$[0, 1)$, valid lengths per batch row.</p>`;
