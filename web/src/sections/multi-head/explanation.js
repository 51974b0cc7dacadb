// Section 4's explanation, HTML with TeX (typeset by ui/math.js): self- and multi-head attention
// on a sentence, then cross-attention.

export const TEXT = `
<p>In <strong>self-attention</strong> the queries, keys and values all come from one sequence $X$
(one row per token): $Q = X W_Q^\\top$, $K = X W_K^\\top$, $V = X W_V^\\top$ (PyTorch's
$[\\text{out}, \\text{in}]$ layout), and every token's output is a weighted sum of all values,
$\\operatorname{Attention}(Q, K, V) = \\operatorname{softmax}\\!\\big(QK^\\top / \\sqrt{d_k}\\big)\\, V$.
<strong>Multi-head attention</strong> runs $h$ of these on $d/h$-wide slices, so each head can
look for something different, then mixes them:</p>
$$\\operatorname{MultiHead}(X) = \\operatorname{Concat}(\\mathrm{head}_1, \\dots, \\mathrm{head}_h)\\, W_O,$$
$$\\mathrm{head}_i = \\operatorname{Attention}\\big(X W_Q^{(i)\\top}, X W_K^{(i)\\top}, X W_V^{(i)\\top}\\big).$$
<p>The tokens are the sentence's lowercased words. Each word's embedding $e(w)$ is a unit vector
drawn from a random generator seeded with a hash (FNV-1a) of the word: the same word always
gets the same vector, in any sentence and any browser, but it means nothing — nothing here is
trained. The input row of token $i$ is $x_i = s\\,\\big(\\sqrt d\\, e(w_i) + p_i\\big)$: the scaled embedding plus
the sinusoidal positional encoding $p_{i,2j} = \\sin(i / 10000^{2j/d})$,
$p_{i,2j+1} = \\cos(i / 10000^{2j/d})$ from the package's <code>positionalEncoding</code>. The
scale $s$ (default 1) multiplies every score of the random heads by $s^2$: at $s = 1$ they are
nearly uniform, as untrained heads are.</p>
<p>The first four heads are <em>designed</em>, so their pattern can be explained; the others are
heads of the package's <code>MultiHeadAttention</code> (PyTorch's <code>nn.MultiheadAttention</code>)
with Xavier-random weights from the seed — what attention looks like before training. A trained
model learns heads like the designed ones (previous-token and coreference heads are found in
real transformers: a head that makes “it” look up “elephant” is the notes' example).</p>`;

export const CROSS_TEXT = `
<h3>Cross-attention</h3>
<p>Cross-attention takes its queries from one sequence and its keys and values from another:
$\\operatorname{Attention}(X_B W_Q^\\top, X_A W_K^\\top, X_A W_V^\\top)$ — the decoder reading the
encoder in translation. The output has one row per token of $B$, built from $A$'s values. Left: a
designed head whose queries and keys are the word embeddings, so each word of $B$ finds its
occurrences in $A$ (a word absent from $A$ spreads its weight). Right: the random multi-head
layer above, <code>forward(X_B, X_A, X_A)</code>, weights averaged over heads as PyTorch returns
them.</p>`;
