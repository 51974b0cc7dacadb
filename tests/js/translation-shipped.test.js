// The models that ship with the page (web/public/models/, written by scripts/train-page-model.js),
// loaded as the page's worker loads them (shipped-model.js does the same checks in the browser):
// one per shipped kind and task, built on the vocabularies the page builds, with the page's
// settings, and trained: each translates sentences to references written here by hand (d2l's
// examples and their French; ISO dates) and scores at least 0.85 held-out BLEU (the floor is the
// Transformer's on long sentences, 0.87 at the page's width after 20 epochs; every other model
// reaches 0.97 or more).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends } from './backends.js';
import { importRepo, readRepoBytes, readRepoJson } from './repo-module.js';

const dir = 'web/shared/translation';
const { prepareTask, taskNames, taskSpec } = await importRepo(`${dir}/tasks.js`);
const { MODELS, Trainer, modelNames, shippedModelName } = await importRepo(`${dir}/trainer.js`);

// Sources and their reference translations, as a visitor would type them.
const REFERENCES = {
  'fra-eng': [
    ['go .', 'va !'], ['i lost .', "j'ai perdu ."], ["he's calm .", 'il est calme .'], ["i'm home .", 'je suis chez moi .'],
    ['she likes the black cats .', 'elle aime les chats noirs .'], // held out: French puts the adjective after the noun
  ],
  'fra-eng-long': [['she likes the black cats and we go to the park .', 'elle aime les chats noirs et nous allons au parc .']],
  dates: [['22 nov 2026', '2 0 2 6 - 1 1 - 2 2'], ['november 22, 2026', '2 0 2 6 - 1 1 - 2 2'], ['the 3rd of may 1999', '1 9 9 9 - 0 5 - 0 3']],
};

const attn = backends[0]; // the load the page uses
const shippedKinds = modelNames.filter((kind) => MODELS[kind].shipped);

test('Bahdanau and the Transformer ship, and every task has references here', () => {
  assert.deepEqual(shippedKinds, ['bahdanau', 'transformer']);
  assert.deepEqual(Object.keys(REFERENCES).sort(), [...taskNames].sort());
});

for (const task of taskNames) describe(`the shipped models of ${task}`, () => {
  const data = prepareTask(task);
  for (const kind of shippedKinds) {
    test(`${kind}: the page's vocabularies and settings, the references, held-out BLEU >= 0.85`, () => {
      const path = `web/public/models/${shippedModelName(kind, task)}`;
      const meta = readRepoJson(`${path}.json`);
      assert.equal(meta.kind, kind);
      assert.equal(meta.task, task);
      assert.deepEqual(meta.srcVocab, data.srcVocab.toJSON(), 'source vocabulary');
      assert.deepEqual(meta.tgtVocab, data.tgtVocab.toJSON(), 'target vocabulary');
      assert.deepEqual(meta.model, MODELS[kind].model, 'the page\'s model settings');
      const trainer = new Trainer(attn, data, { kind, model: meta.model, training: meta.training });
      try {
        trainer.model.loadStateDict(attn.readSafetensors(readRepoBytes(`${path}.safetensors`)));
        const sources = REFERENCES[task].map(([src]) => src);
        const outputs = trainer.translateText(sources, taskSpec(task).prepare)
          .map((r) => r.output.filter((t) => t !== '<eos>').join(' '));
        assert.deepEqual(outputs, REFERENCES[task].map(([, tgt]) => tgt));
        const { bleu } = trainer.evaluate();
        assert.ok(bleu >= 0.85, `held-out BLEU ${bleu.toFixed(3)}`);
        // What the script recorded is what the weights give (they are the script's output).
        assert.ok(Math.abs(bleu - meta.heldOutBleu) < 0.01, `held-out BLEU ${bleu.toFixed(4)} against ${meta.heldOutBleu} recorded`);
      } finally {
        trainer.dispose();
      }
    });
  }
});
