// Section 7's last part: a sequence of the visitor's (one character per token of ALPHABET)
// continued by the model on show through generate(), with temperature and top-k sliders. The
// worker answers { type: 'generation', id, tokens }; only the latest request's answer is drawn.

import { controlBar, slider, textField } from '../../ui/controls.js';
import { prose } from '../../ui/math.js';
import { ALPHABET } from './task.js';

const MAX_NEW_TOKENS = 24;

// The visitor's text as token ids (characters outside the alphabet are dropped), and back.
const tokensOf = (text) => [...text].map((c) => ALPHABET.indexOf(c)).filter((t) => t >= 0);
export const textOf = (tokens) => tokens.map((t) => ALPHABET[t]).join('');

/**
 * The part's nodes and its two operations: request() asks the worker (send) for a continuation
 * of the text in the field when ready() says a model is there; show(message) draws the worker's
 * answer. `values` and `section` hold and update the URL state (prompt, temp, topk).
 */
export function continuationPart({ values, section, send, ready }) {
  let latest = 0;
  let answer = null;
  const control = (key, make) => make((value) => {
    section.set({ [key]: value });
    request();
  });
  const prompt = control('prompt', (onInput) => textField({
    name: 'prompt', label: 'a sequence (letters, digits, + and /: 64 tokens)', value: values.prompt, maxLength: 40, onInput,
  }));
  const temperature = control('temp', (onInput) => slider({
    name: 'temp', label: 'temperature', min: 0, max: 2, step: 0.1, value: values.temp,
    format: (t) => (t === 0 ? '0 (greedy)' : t.toFixed(1)), onInput,
  }));
  const topK = control('topk', (onInput) => slider({
    name: 'topk', label: 'top-k', min: 0, max: ALPHABET.length, step: 1, value: values.topk,
    format: (k) => (k === 0 ? 'all' : String(k)), onInput,
  }));
  const line = document.createElement('p');
  line.className = 'induction-continuation';
  line.setAttribute('aria-live', 'polite');

  function request() {
    const tokens = tokensOf(prompt.input.value);
    if (tokens.length === 0 || !ready()) return;
    latest += 1;
    send({
      type: 'generate', id: latest, prompt: tokens, maxNewTokens: MAX_NEW_TOKENS,
      temperature: values.temp, topK: values.topk, seed: latest,
    });
  }

  function show(message) {
    if (message.id !== latest) return;
    answer = message.tokens;
    const given = tokensOf(prompt.input.value).length;
    const known = document.createElement('span');
    known.textContent = textOf(answer.slice(0, given));
    const added = document.createElement('strong');
    added.className = 'generated';
    added.textContent = textOf(answer.slice(given));
    line.replaceChildren(known, added);
  }

  const nodes = [
    prose('<p>Type a sequence with a repeat in it, and the model continues it by copying: at a token it has seen before, it predicts what followed it. It generates without the heads ablated above: take away layer 0’s previous-token head and the copying stops.</p>'),
    controlBar(prompt, temperature, topK),
    line,
  ];
  return { nodes, request, show };
}
