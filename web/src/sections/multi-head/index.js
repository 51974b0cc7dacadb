// 4. Self-, cross- and multi-head attention on an editable sentence: word tokens, seeded-hash
// embeddings plus sinusoidal positions, designed heads (previous token, same word, uniform,
// hard lookup) beside seeded random heads of nn.MultiheadAttention, a lines view of one head,
// the shapes through the layer, and cross-attention between two sentences.

import * as Plot from '@observablehq/plot';
import { checkbox, controlBar, select, slider, textField } from '../../ui/controls.js';
import { heatmap } from '../../ui/heatmap.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { LOOKUP_SCALE, SAME_WORD_SCALE, createMultiHeadModel, tokenize } from './compute.js';

const SENTENCE = 'The pink elephant tried to get into the car but it was too big';
const SENTENCE_B = 'it was too big for the small car';
const ACCENT = '#d6452b';

const TEXT = `
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

const CROSS_TEXT = `
<h3>Cross-attention</h3>
<p>Cross-attention takes its queries from one sequence and its keys and values from another:
$\\operatorname{Attention}(X_B W_Q^\\top, X_A W_K^\\top, X_A W_V^\\top)$ — the decoder reading the
encoder in translation. The output has one row per token of $B$, built from $A$'s values. Left: a
designed head whose queries and keys are the word embeddings, so each word of $B$ finds its
occurrences in $A$ (a word absent from $A$ spreads its weight). Right: the random multi-head
layer above, <code>forward(X_B, X_A, X_A)</code>, weights averaged over heads as PyTorch returns
them.</p>`;

const HEAD_INFO = {
  prev: ['previous token', 'A boolean mask leaves one key per query: j = i − 1 (the first token keeps itself).'],
  same: ['same word', `Q = K = word embeddings e(w) without positions, scale ${SAME_WORD_SCALE}: every occurrence of the query's word shares the weight.`],
  uniform: ['uniform average', 'Scale 0: every score is 0 and the softmax gives 1/n — average pooling.'],
  lookup: ['hard lookup', `Every query is e(target), scale ${LOOKUP_SCALE}: a database lookup of one key, whatever the query.`],
};

export function mountMultiHead(root, attn) {
  const state = urlState('mh', {
    text: SENTENCE, text2: SENTENCE_B, d: 32, h: 4, seed: 1, pe: true, causal: false,
    lookup: 'elephant', head: 'same', focus: -1, scale: 1,
  }, root.id);
  const section = scaffold(root, { number: 4, title: 'Self-, cross- and multi-head attention', state });
  const { values } = state;

  const parts = {
    self: [() => computeSelf(), (r) => drawSelf(r)],
    lines: [() => last, (r) => drawLines(r)],
    cross: [() => computeCross(), (r) => drawCross(r)],
  };
  const schedule = (...names) => names.forEach((name) => section.meter.schedule(...parts[name], name));
  const bind = (key, ...partNames) => (v) => {
    section.set({ [key]: v });
    schedule(...partNames);
  };

  const sentence = textField({ name: 'sentence', label: 'sentence A (self-attention)', value: values.text, onInput: bind('text', 'self', 'cross') });
  const dim = select({ name: 'embed-dim', label: 'model width d', options: [8, 16, 32, 64].map((v) => [String(v), String(v)]), value: String(values.d), onChange: (v) => bind('d', 'self', 'cross')(Number(v)) });
  const heads = select({ name: 'heads', label: 'random heads h', options: [1, 2, 4, 8].map((v) => [String(v), String(v)]), value: String(values.h), onChange: (v) => bind('h', 'self', 'cross')(Number(v)) });
  const seed = slider({ name: 'seed', label: 'weights seed', min: 0, max: 99, step: 1, value: values.seed, onInput: bind('seed', 'self', 'cross') });
  const inputScale = slider({ name: 'input-scale', label: 'input scale s', min: 0.25, max: 4, step: 0.25, value: values.scale, format: (v) => `×${v}`, onInput: bind('scale', 'self', 'cross') });
  const positions = checkbox({ name: 'positional-encoding', label: 'add positional encoding', checked: values.pe, onChange: bind('pe', 'self', 'cross') });
  const causal = checkbox({ name: 'causal', label: 'causal mask (decoder)', checked: values.causal, onChange: bind('causal', 'self') });
  const lookup = select({ name: 'lookup', label: 'hard lookup target', options: [[values.lookup, values.lookup]], value: values.lookup, onChange: bind('lookup', 'self') });
  const headPick = select({ name: 'lines-head', label: 'head shown as lines', options: [[values.head, values.head]], value: values.head, onChange: bind('head', 'lines') });
  const focus = select({ name: 'lines-focus', label: 'queries', options: [['-1', 'all']], value: String(values.focus), onChange: (v) => bind('focus', 'lines')(Number(v)) });
  const sentenceB = textField({ name: 'sentence-b', label: 'sentence B (queries for cross-attention)', value: values.text2, onInput: bind('text2', 'cross') });

  const tokenList = document.createElement('div');
  tokenList.className = 'tokens';
  tokenList.setAttribute('aria-label', 'tokens');
  const shapes = document.createElement('div');
  shapes.className = 'shapes';
  shapes.setAttribute('aria-label', 'tensor shapes through the layer');
  const headsBox = document.createElement('div');
  headsBox.className = 'heads';
  headsBox.dataset.plot = 'heads';
  const legend = document.createElement('div');
  const lines = card('One head as lines: query tokens (left) to key tokens (right), opacity = weight', { name: 'lines', wide: true });
  const crossSame = card('Designed cross head: same word (B → A)', { name: 'cross-same' });
  const crossRandom = card('Random multi-head layer, B → A (mean over heads)', { name: 'cross-random' });
  const crossNote = document.createElement('p');
  crossNote.className = 'readout';

  const headsTitle = document.createElement('h3');
  headsTitle.textContent = 'The heads, side by side (rows: queries, columns: keys)';
  const shapesTitle = document.createElement('h3');
  shapesTitle.textContent = 'Shapes through the layer';
  section.append(
    prose(TEXT),
    controlBar(sentence, dim, heads, seed, inputScale, lookup, positions, causal),
    tokenList,
    shapesTitle, shapes,
    headsTitle, legend, headsBox,
    controlBar(headPick, focus),
    plotGrid(lines),
    prose(CROSS_TEXT),
    controlBar(sentenceB),
    crossNote,
    plotGrid(crossSame, crossRandom),
  );

  // --- computation (compute.js) ------------------------------------------------------------------
  const model = createMultiHeadModel(attn);
  const settings = () => ({
    d: Number(dim.value), h: Number(heads.value), seed: seed.value, scale: inputScale.value, pe: values.pe,
    causal: causal.value, lookup: values.lookup,
  });
  let last = null;

  function computeSelf() {
    const tokens = tokenize(sentence.value);
    const s = settings();
    if (tokens.length === 0) return (last = { tokens, d: s.d, h: s.h, heads: [] });
    const { target, designed, randomHeads, weightShape, outputShape } = model.self(tokens, s);
    const named = designed.map(({ id, weights }) => ({
      id, name: HEAD_INFO[id][0], info: id === 'lookup' ? HEAD_INFO[id][1].replace('target', `'${target}'`) : HEAD_INFO[id][1],
      weights,
    }));
    const numHeads = randomHeads.length;
    const random = randomHeads.map(({ id, weights }, i) => ({
      id, name: `random head ${i + 1}`,
      info: `nn.MultiheadAttention head ${i + 1} of ${numHeads}, seed ${s.seed}: d/h = ${s.d / s.h} wide.`,
      weights,
    }));
    last = { tokens, d: s.d, h: s.h, target, heads: [...named, ...random], weightShape, outputShape };
    return last;
  }

  function computeCross() {
    const a = tokenize(sentence.value);
    const b = tokenize(sentenceB.value);
    const s = settings();
    if (a.length === 0 || b.length === 0) return { a, b, d: s.d };
    return { a, b, d: s.d, ...model.cross(a, b, s) };
  }

  // --- drawing --------------------------------------------------------------------------------
  const labelMargin = (tokens) => Math.min(110, 12 + 6.6 * Math.max(...tokens.map((t) => t.length)));

  function drawSelf(r) {
    // Token chips, the select options that depend on the tokens, the shapes, the heads.
    tokenList.replaceChildren(...r.tokens.map((t, i) => {
      const chip = document.createElement('span');
      chip.textContent = t;
      const index = document.createElement('small');
      index.textContent = String(i);
      chip.append(index);
      return chip;
    }));
    if (r.tokens.length === 0) {
      tokenList.textContent = 'Type a sentence: no words yet.';
      headsBox.replaceChildren();
      legend.replaceChildren();
      lines.body.replaceChildren();
      shapes.replaceChildren();
      return;
    }
    const unique = [...new Set(r.tokens)];
    lookup.setOptions(unique.map((t) => [t, t]), r.target);
    headPick.setOptions(r.heads.map((hd) => [hd.id, hd.name]), values.head);
    focus.setOptions([['-1', 'all'], ...r.tokens.map((t, i) => [String(i), `${i}: ${t}`])], String(values.focus));
    drawShapes(r);

    const n = r.tokens.length;
    const margin = labelMargin(r.tokens);
    const available = widthOf(headsBox, { min: 280, max: 1100 });
    const perRow = Math.max(1, Math.min(4, Math.floor(available / (margin + 16 + n * 11))));
    const cell = Math.max(9, Math.min(18, Math.floor((available / perRow - 18 - margin - 8) / n)));
    // Many heads of a long sentence: images rather than thousands of SVG rects.
    const raster = r.heads.length * n * n > 3000;
    legend.replaceChildren(Plot.legend({ color: { scheme: 'viridis', domain: [0, 1], label: 'attention weight' }, width: 260 }));
    headsBox.replaceChildren(...r.heads.map((hd) => {
      const figure = document.createElement('figure');
      figure.dataset.head = hd.id;
      const caption = document.createElement('figcaption');
      const tag = document.createElement('span');
      tag.className = 'head-tag';
      tag.textContent = hd.name;
      caption.append(tag, ` — ${hd.info}`);
      caption.style.maxWidth = `${margin + 8 + n * cell}px`;
      figure.append(heatmap({
        values: hd.weights, rows: n, cols: n, cell, raster,
        rowLabel: (i) => r.tokens[i], colLabel: (j) => r.tokens[j],
        x: { tickRotate: -90 }, margins: { left: margin, bottom: margin, top: 6, right: 8 },
      }), caption);
      return figure;
    }));
    drawLines(r);
  }

  function drawShapes(r) {
    const { d, h, tokens } = r;
    const n = tokens.length;
    const dh = d / h;
    const stages = [
      ['tokens', `n = ${n}`],
      ['X = s(√d·E + P)', `[1, ${n}, ${d}]`],
      ['Q, K, V = X Wᵀ', `3 × [1, ${n}, ${d}]`],
      [`split into ${h} heads`, `[1, ${h}, ${n}, ${dh}]`],
      ['softmax(QKᵀ/√' + dh + ')', `[${r.weightShape.join(', ')}]`],
      ['weights · V', `[1, ${h}, ${n}, ${dh}]`],
      ['concat', `[1, ${n}, ${d}]`],
      ['· W_Oᵀ → output', `[${r.outputShape.join(', ')}]`],
    ];
    shapes.replaceChildren(...stages.flatMap(([name, shape], i) => {
      const box = document.createElement('div');
      box.className = 'stage';
      const b = document.createElement('b');
      b.textContent = name;
      box.append(b, shape);
      if (i === 0) return [box];
      const arrow = document.createElement('span');
      arrow.className = 'arrow';
      arrow.textContent = '→';
      arrow.setAttribute('aria-hidden', 'true');
      return [arrow, box];
    }));
  }

  function drawLines(r) {
    if (!r || r.tokens.length === 0) return;
    const head = r.heads.find((hd) => hd.id === headPick.value) ?? r.heads[0];
    const n = r.tokens.length;
    const only = Number(focus.value);
    const links = [];
    for (let i = 0; i < n; i++) {
      if (only >= 0 && i !== only) continue;
      for (let j = 0; j < n; j++) {
        const w = head.weights[i * n + j];
        if (w > 0.004) links.push({ i, j, w });
      }
    }
    const margin = labelMargin(r.tokens) + 8;
    const rows = r.tokens.map((t, i) => ({ t, i }));
    lines.caption.textContent = `“${head.name}” as lines: query tokens (left) to key tokens (right), opacity and width = weight`;
    lines.body.replaceChildren(Plot.plot({
      width: Math.min(widthOf(lines.body), 640), height: 30 + n * 24,
      marginLeft: margin, marginRight: margin, marginTop: 22, marginBottom: 8,
      x: { domain: [0, 1], axis: null },
      y: { domain: rows.map((d) => d.i), type: 'point', axis: null },
      opacity: { domain: [0, 1], range: [0, 1] },
      marks: [
        Plot.link(links, {
          x1: 0, x2: 1, y1: 'i', y2: 'j', stroke: '#2a6f97',
          strokeOpacity: 'w', strokeWidth: (d) => 0.8 + 3.5 * d.w,
        }),
        Plot.text(rows, {
          x: 0, y: 'i', text: 't', textAnchor: 'end', dx: -8, fontSize: 12,
          fill: (d) => (only === d.i ? ACCENT : '#1d2433'), fontWeight: (d) => (only === d.i ? 700 : 400),
        }),
        Plot.text(rows, { x: 1, y: 'i', text: 't', textAnchor: 'start', dx: 8, fontSize: 12 }),
        Plot.text(['queries'], { x: 0, frameAnchor: 'top', dy: -16, fill: '#666', fontSize: 11 }),
        Plot.text(['keys'], { x: 1, frameAnchor: 'top', dy: -16, fill: '#666', fontSize: 11 }),
        Plot.dot(rows, { x: 0, y: 'i', r: 2.5, fill: '#1d2433' }),
        Plot.dot(rows, { x: 1, y: 'i', r: 2.5, fill: '#1d2433' }),
      ],
    }));
  }

  function drawCross(r) {
    if (r.a.length === 0 || r.b.length === 0) {
      crossNote.textContent = 'Both sentences need at least one word.';
      crossSame.body.replaceChildren();
      crossRandom.body.replaceChildren();
      return;
    }
    crossNote.textContent = `Queries: ${r.b.length} tokens of B; keys and values: ${r.a.length} tokens of A; `
      + `weights [1, ${r.b.length}, ${r.a.length}], output [${r.outputShape.join(', ')}] — B's length, A's content.`;
    const margin = labelMargin([...r.a, ...r.b]);
    const drawOne = (container, weightsData) => {
      const available = widthOf(container, { min: 260, max: 560 });
      const cell = Math.max(9, Math.min(20, Math.floor((available - margin - 12) / r.a.length)));
      container.replaceChildren(heatmap({
        values: weightsData, rows: r.b.length, cols: r.a.length, cell,
        rowLabel: (i) => r.b[i], colLabel: (j) => r.a[j],
        x: { tickRotate: -90, label: 'keys: sentence A', labelAnchor: 'right' },
        y: { label: 'queries: B', labelAnchor: 'top' },
        margins: { left: margin, bottom: margin + 14, top: 20, right: 8 },
      }));
    };
    drawOne(crossSame.body, r.same);
    drawOne(crossRandom.body, r.random);
  }

  return {
    render: () => section.meter.run(
      () => [computeSelf(), null, computeCross()],
      ([self, , cross]) => {
        drawSelf(self);
        drawCross(cross);
      },
    ),
  };
}
