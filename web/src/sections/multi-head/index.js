// 4. Self-, cross- and multi-head attention on an editable sentence: word tokens, seeded-hash
// embeddings plus sinusoidal positions, designed heads (previous token, same word, uniform,
// hard lookup) beside seeded random heads of nn.MultiheadAttention, a lines view of one head,
// the shapes through the layer, and cross-attention between two sentences.

import { checkbox, controlBar, select, slider, textField } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { card, widthOf } from '../../ui/plot.js';
import { plotGrid, scaffold } from '../../ui/section.js';
import { urlState } from '../../ui/url-state.js';
import { createMultiHeadModel, namedHeads, tokenize } from './compute.js';
import { CROSS_TEXT, TEXT } from './explanation.js';
import { crossHeatmap, headFigures, linesPlot, shapeStages, tokenChips, weightLegend } from './plots.js';

const SENTENCE = 'The pink elephant tried to get into the car but it was too big';
const SENTENCE_B = 'it was too big for the small car';
const numbers = (list) => list.map((v) => [String(v), String(v)]);

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
  const dim = select({ name: 'embed-dim', label: 'model width d', options: numbers([8, 16, 32, 64]), value: String(values.d), onChange: (v) => bind('d', 'self', 'cross')(Number(v)) });
  const heads = select({ name: 'heads', label: 'random heads h', options: numbers([1, 2, 4, 8]), value: String(values.h), onChange: (v) => bind('h', 'self', 'cross')(Number(v)) });
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

  const model = createMultiHeadModel(attn);
  const settings = () => ({
    d: Number(dim.value), h: Number(heads.value), seed: seed.value, scale: inputScale.value, pe: values.pe,
    causal: causal.value, lookup: values.lookup,
  });
  let last = null; // the self-attention result the lines view redraws from

  function computeSelf() {
    const tokens = tokenize(sentence.value);
    const s = settings();
    if (tokens.length === 0) return (last = { tokens, d: s.d, h: s.h, heads: [] });
    const result = model.self(tokens, s);
    const { target, weightShape, outputShape } = result;
    last = { tokens, d: s.d, h: s.h, target, heads: namedHeads(result, s), weightShape, outputShape };
    return last;
  }

  function computeCross() {
    const a = tokenize(sentence.value);
    const b = tokenize(sentenceB.value);
    const s = settings();
    if (a.length === 0 || b.length === 0) return { a, b, d: s.d };
    return { a, b, d: s.d, ...model.cross(a, b, s) };
  }

  function drawSelf(r) {
    tokenList.replaceChildren(...tokenChips(r.tokens));
    if (r.tokens.length === 0) {
      tokenList.textContent = 'Type a sentence: no words yet.';
      for (const box of [headsBox, legend, lines.body, shapes]) box.replaceChildren();
      return;
    }
    // The options that depend on the tokens.
    lookup.setOptions([...new Set(r.tokens)].map((t) => [t, t]), r.target);
    headPick.setOptions(r.heads.map((hd) => [hd.id, hd.name]), values.head);
    focus.setOptions([['-1', 'all'], ...r.tokens.map((t, i) => [String(i), `${i}: ${t}`])], String(values.focus));
    shapes.replaceChildren(...shapeStages(r));
    legend.replaceChildren(weightLegend());
    headsBox.replaceChildren(...headFigures(r, widthOf(headsBox, { min: 280, max: 1100 })));
    drawLines(r);
  }

  function drawLines(r) {
    if (!r || r.tokens.length === 0) return;
    const head = r.heads.find((hd) => hd.id === headPick.value) ?? r.heads[0];
    lines.caption.textContent = `“${head.name}” as lines: query tokens (left) to key tokens (right), opacity and width = weight`;
    lines.body.replaceChildren(linesPlot(r, head, Number(focus.value), widthOf(lines.body)));
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
    crossSame.body.replaceChildren(crossHeatmap(r, r.same, widthOf(crossSame.body, { min: 260, max: 560 })));
    crossRandom.body.replaceChildren(crossHeatmap(r, r.random, widthOf(crossRandom.body, { min: 260, max: 560 })));
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
