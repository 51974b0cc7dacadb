// Labelled form controls: a range slider with a live readout (linear or log scale), a select,
// a checkbox, a button and a text field. Native inputs, so each is keyboard-operable as is.

let counter = 0;
const nextId = (name) => `${name}-${++counter}`;

function field(className) {
  const element = document.createElement('div');
  element.className = `control ${className}`;
  return element;
}

function labelFor(input, text) {
  const label = document.createElement('label');
  label.htmlFor = input.id;
  label.textContent = text;
  return label;
}

/**
 * A slider. With `log: true` the range input moves over log10(value), so a slider spanning
 * 0.01 … 1000 gives every decade the same travel. `format` renders the readout.
 * onInput(value) fires while it moves.
 */
export function slider({ name, label, min, max, step, value, log = false, format = String, onInput }) {
  const element = field('control-slider');
  const input = document.createElement('input');
  input.type = 'range';
  input.id = nextId(name);
  input.name = name;
  const toInput = (v) => (log ? Math.log10(v) : v);
  const fromInput = (x) => (log ? 10 ** x : x);
  input.min = String(toInput(min));
  input.max = String(toInput(max));
  input.step = String(log ? step ?? 0.01 : step ?? 1);
  const output = document.createElement('output');
  output.htmlFor = input.id;
  const head = document.createElement('div');
  head.className = 'control-head';
  head.append(labelFor(input, label), output);
  element.append(head, input);

  // A value set from code (a preset, the URL) is kept exactly, although the input can only
  // show the nearest step; moving the slider reads the input again.
  let exact = null;
  const read = () => {
    if (exact !== null) return exact;
    const v = fromInput(Number(input.value));
    // A log slider's steps land on values like 0.31622; round to 3 significant digits.
    return log ? Number(v.toPrecision(3)) : v;
  };
  const show = () => {
    output.value = format(read());
    input.setAttribute('aria-valuetext', output.value);
  };
  input.addEventListener('input', () => {
    exact = null;
    show();
    onInput?.(read());
  });

  const control = {
    element,
    input,
    get value() {
      return read();
    },
    set value(v) {
      const clamped = Math.min(max, Math.max(min, Number.isFinite(v) ? v : min));
      input.value = String(toInput(clamped));
      // Linear sliders snap to their step (as the input does); log sliders keep the value.
      exact = log ? clamped : null;
      show();
    },
  };
  control.value = value;
  return control;
}

/** A select; options are [value, text] pairs. onChange(value). */
export function select({ name, label, options, value, onChange }) {
  const element = field('control-select');
  const input = document.createElement('select');
  input.id = nextId(name);
  input.name = name;
  for (const [optionValue, text] of options) input.add(new Option(text, optionValue));
  element.append(labelFor(input, label), input);
  input.addEventListener('change', () => onChange?.(input.value));
  const control = {
    element,
    input,
    get value() {
      return input.value;
    },
    set value(v) {
      input.value = options.some(([o]) => o === v) ? v : options[0][0];
    },
    setOptions(next, keep) {
      input.replaceChildren(...next.map(([o, text]) => new Option(text, o)));
      options = next;
      control.value = keep;
    },
  };
  control.value = value;
  return control;
}

/** A checkbox. onChange(checked). */
export function checkbox({ name, label, checked, onChange }) {
  const element = field('control-checkbox');
  const input = document.createElement('input');
  input.type = 'checkbox';
  input.id = nextId(name);
  input.name = name;
  input.checked = checked;
  element.append(input, labelFor(input, label));
  input.addEventListener('change', () => onChange?.(input.checked));
  return {
    element,
    input,
    get value() {
      return input.checked;
    },
    set value(v) {
      input.checked = Boolean(v);
    },
  };
}

/** A text field that reports while typing. onInput(text). */
export function textField({ name, label, value, onInput, maxLength = 200 }) {
  const element = field('control-text');
  const input = document.createElement('input');
  input.type = 'text';
  input.id = nextId(name);
  input.name = name;
  input.maxLength = maxLength;
  input.spellcheck = false;
  input.value = value;
  element.append(labelFor(input, label), input);
  input.addEventListener('input', () => onInput?.(input.value));
  return {
    element,
    input,
    get value() {
      return input.value;
    },
    set value(v) {
      input.value = v;
    },
  };
}

/** A button. */
export function button({ name, label, onClick, title }) {
  const element = document.createElement('button');
  element.type = 'button';
  element.className = 'control-button';
  element.name = name;
  element.textContent = label;
  if (title) element.title = title;
  element.addEventListener('click', () => onClick?.());
  return { element, input: element };
}

/** A row of controls. */
export function controlBar(...controls) {
  const bar = document.createElement('div');
  bar.className = 'controls';
  bar.append(...controls.map((c) => c.element ?? c));
  return bar;
}

/**
 * A progress bar with a text line above it that labels it: { element, text, bar }. `id` names
 * the text element (the bar's aria-labelledby).
 */
export function progressBar({ id, max = 1, text = '' }) {
  const element = document.createElement('div');
  element.className = 'control bench-progress';
  const label = document.createElement('span');
  label.id = id;
  label.className = 'bench-progress-text';
  label.textContent = text;
  const bar = document.createElement('progress');
  bar.max = max;
  bar.value = 0;
  bar.setAttribute('aria-labelledby', id);
  element.append(label, bar);
  return { element, text: label, bar };
}
