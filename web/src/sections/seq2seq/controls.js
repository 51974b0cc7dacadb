// A seq2seq section's controls: the training bar (task, model where the section offers more
// than one, seed, start/pause/reset, progress) and the comparison bar, with their URL state;
// what the buttons allow follows the worker's state (showTrainState).

import { button, controlBar, progressBar, select, slider } from '../../ui/controls.js';
import { TASKS, taskNames } from '../../../shared/translation/tasks.js';
import { EPOCHS, MODELS } from '../../../shared/translation/trainer.js';

/**
 * The training bar. `models`: the kinds (keys of MODELS) the section offers, a menu when more
 * than one; send(message) posts to the worker; onTask(task) runs after a task change is stored
 * and sent; trainState() is the worker's latest state. Returns { element, progress,
 * progressText, buttons: { start, pause, reset } }.
 */
export function trainingBar({ id, models, values, section, send, onTask, trainState }) {
  const task = select({
    name: 'task', label: 'task', value: values.task,
    options: taskNames.map((name) => [name, TASKS[name].label]),
    onChange: (v) => {
      section.set({ task: v });
      onTask(v);
      send({ type: 'config', task: v });
    },
  });
  const seed = slider({
    name: 'seed', label: 'seed (initial weights, batch order)', min: 0, max: 99, step: 1, value: values.seed,
    onInput: (v) => {
      section.set({ seed: v });
      send({ type: 'config', seed: v });
    },
  });
  const model = models.length > 1 && select({
    name: 'model', label: 'model', value: values.model,
    options: models.map((name) => [name, MODELS[name].label]),
    onChange: (v) => {
      section.set({ model: v });
      send({ type: 'config', kind: v });
    },
  });
  const start = button({ name: 'start', label: 'Train from scratch', onClick: () => send({ type: 'start' }) });
  start.element.classList.add('primary');
  const pause = button({
    name: 'pause', label: 'Pause',
    onClick: () => send({ type: trainState() === 'running' ? 'pause' : 'resume' }),
  });
  const reset = button({ name: 'reset', label: 'Reset', onClick: () => send({ type: 'reset' }) });
  reset.element.title = 'Back to the shipped model of this kind (untrained weights for a kind that ships none)';
  const buttons = document.createElement('div');
  buttons.className = 'control control-buttons';
  buttons.append(start.element, pause.element, reset.element);

  const { element: progressBox, text: progressText, bar: progress } = progressBar({ id: `${id}-progress-text`, max: EPOCHS });
  return {
    element: controlBar(...[task, model, seed, buttons, progressBox].filter(Boolean)),
    progress,
    progressText,
    buttons: { start: start.element, pause: pause.element, reset: reset.element },
  };
}

/** The comparison bar: epochs each (in the URL) and "Train all three", which calls onCompare(epochs). */
export function compareBar({ values, section, onCompare }) {
  const epochs = select({
    name: 'compare-epochs', label: 'epochs each', value: String(values.cmp),
    options: [1, 2, 5, 10, 20].map((n) => [String(n), String(n)]),
    onChange: (v) => section.set({ cmp: Number(v) }),
  });
  const compare = button({ name: 'compare', label: 'Train all three', onClick: () => onCompare(Number(epochs.value)) });
  const group = document.createElement('div');
  group.className = 'control control-buttons';
  group.append(compare.element);
  return { element: controlBar(epochs, group), button: compare.element };
}

/**
 * Enables the buttons that apply in the worker's state `s` and marks the section busy (compare:
 * where the section has the comparison).
 */
export function showTrainState(root, s, { start, pause, reset, compare }) {
  const busy = s === 'loading' || s === 'comparing';
  for (const b of [start, reset, compare]) if (b) b.disabled = busy;
  pause.disabled = !(s === 'running' || s === 'paused');
  pause.textContent = s === 'paused' ? 'Resume' : 'Pause';
  pause.name = s === 'paused' ? 'resume' : 'pause';
  root.setAttribute('aria-busy', String(s === 'running' || busy));
}
