// Section 5's explanation, HTML with TeX (typeset by ui/math.js): Bahdanau attention and how
// the page trains it, then the comparison by source length of three models: Bahdanau's, the same
// GRU without attention and section 6's Transformer.

import { EPOCHS, MODEL, TRAINING } from '../../../shared/translation/trainer.js';

export const TEXT = `
<p>Bahdanau, Cho and Bengio's encoder–decoder reads the source with a GRU, and at every output
step the decoder <em>attends</em>: its previous hidden state $s_{t-1}$ is the query, the encoder's
outputs $h_j$ are keys and values, and additive attention scores them,
$$a(s_{t-1}, h_j) = w_v^\\top \\tanh(W_q s_{t-1} + W_k h_j),$$
$$\\alpha_{tj} = \\operatorname{softmax}_j\\, a(s_{t-1}, h_j),\\qquad c_t = \\textstyle\\sum_j \\alpha_{tj} h_j.$$
The context $c_t$ is fed to the decoder GRU with the previous word's embedding. Nobody tells
the model which source word goes with which output word: the weights $\\alpha_{tj}$ are
<strong>learned</strong> from sentence pairs alone. The heatmap shows them — one row per output
word, one column per source word. Watch the diagonal form, and the swap where French puts the
adjective after the noun (“black cats” → “chats noirs”).</p>
<p>Everything trains here, in your browser, in a Web Worker: ${MODEL.numLayers} GRU layer of
${MODEL.numHiddens} units, embeddings of ${MODEL.embedSize}, Adam (learning rate ${TRAINING.lr},
gradients clipped to norm ${TRAINING.clip}), batches of ${TRAINING.batchSize} pairs, ${EPOCHS}
passes over about 1,800 generated pairs. Held-out BLEU is d2l's ($k = 2$) on pairs the model
never trains on. A model trained the same way ships with the page, so it translates at once;
“Train from scratch” forgets it and learns again from random weights.</p>
<p>The <em>model</em> menu swaps in the same GRU <strong>without attention</strong> (d2l's
plain decoder, which “Three models by sentence length” below describes): it has no alignment to
draw. The BLEU chart keeps the last run of each model you train here,
dashed beside the one on show: train one, then the other, and compare them on the same task, in
the same browser, on the same machine. <a href="#transformer">Section 6</a> trains a model with
attention and no recurrence at all, the Transformer, on the same tasks.</p>`;

export const COMPARE_TEXT = `
<h3>Three models by sentence length</h3>
<p>Without attention the decoder gets one fixed vector — the encoder's last state — for the
whole sentence (d2l's plain <code>Seq2SeqDecoder</code>). Bahdanau et al. showed that this
bottleneck hurts most on long sentences, so the comparison trains on sentences of one to four
clauses joined by “and” (up to 30 source words) whatever task is chosen above. “Train all three”
trains fresh models of Bahdanau's GRU with attention, the same GRU without it, and the
Transformer of <a href="#transformer">section 6</a>, each with its settings above and there, from
the same seed on the same batches in the same order, for the same number of epochs, and draws
the held-out BLEU of each by source length.</p>`;
