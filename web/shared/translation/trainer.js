// Training and evaluating one of the seq2seq sections' models (MODELS: a Seq2SeqAttention or a
// Transformer) on a prepared task (tasks.js): seeded minibatch steps (clipped Adam, d2l's loss),
// held-out BLEU (d2l's, k = 2) and BLEU by source length, and greedy translations with their
// attention. No DOM and no worker API here: the page's worker
// (web/src/sections/seq2seq/train-worker.js) and scripts/train-page-model.js both drive it.

import { decodeTokens, encodeSources } from './arrays.js';
import { cutMatrix, headMatrices, meanOverHeads } from './attention-maps.js';
import { batches } from './batches.js';
import { bleuByLength, sentenceBleus } from './bleu.js';
import { BOS, EOS, PAD } from './text.js';

/**
 * The seq2seq sections' models, each with its settings: d2l's GRU encoder-decoder with Bahdanau
 * attention, the same without attention (d2l's plain decoder), and d2l's Transformer. `label`
 * names it in menus, `shortLabel` in legends and lines where the three stand side by side;
 * `model` is the package class's config, `training` the step's; `shipped` marks the kinds of which
 * scripts/train-page-model.js ships a trained model per task (shippedModelName), so the page
 * translates at once with them.
 */
// Bahdanau: chosen by measuring held-out BLEU against seconds of training (see
// scripts/train-page-model.js): one GRU layer of 64 learns fra-eng faster per second than two
// (two layers of 32 or 64 were at BLEU ~0.75 after 20 s of steps, one layer of 64 at ~0.95 after
// 10 s). Transformer: d2l 11.7's shape at a width that trains in seconds; see MODEL_CHOICE below.
export const MODELS = {
  bahdanau: {
    label: 'Bahdanau (GRU + attention)',
    shortLabel: 'Bahdanau',
    className: 'Seq2SeqAttention',
    shipped: true,
    model: { embedSize: 32, numHiddens: 64, numLayers: 1, dropout: 0, attention: true },
    training: { batchSize: 32, lr: 0.01, clip: 1 },
  },
  plain: {
    label: 'GRU, no attention',
    shortLabel: 'no attention',
    className: 'Seq2SeqAttention',
    model: { embedSize: 32, numHiddens: 64, numLayers: 1, dropout: 0, attention: false },
    training: { batchSize: 32, lr: 0.01, clip: 1 },
  },
  transformer: {
    label: 'Transformer (d2l 11.7)',
    shortLabel: 'Transformer',
    className: 'Transformer',
    shipped: true,
    model: { numHiddens: 32, ffnNumHiddens: 64, numHeads: 4, numBlks: 2, dropout: 0 },
    training: { batchSize: 32, lr: 0.005, clip: 1 },
  },
};
export const modelNames = Object.keys(MODELS);
/** Bahdanau's settings, which the section's explanation quotes. */
export const { model: MODEL, training: TRAINING } = MODELS.bahdanau;
/** The file name (without extension) of the shipped model of `kind` for `task`, in web/public/models/. */
export const shippedModelName = (kind, task) => `${kind}-${task}`;
export const EPOCHS = 20;
export const BLEU_K = 2;
/** Sources of at least this many words count as long (Bahdanau et al.'s figure). */
export const LONG_WORDS = 20;

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

export class Trainer {
  /**
   * attn: a loaded package; data: prepareTask's result; kind: a key of MODELS. `model` and
   * `training` override the kind's settings (a shipped model's own).
   */
  constructor(attn, data, { seed = 0, kind = 'bahdanau', model, training } = {}) {
    const spec = MODELS[kind];
    if (!spec) throw new RangeError(`kind: expected one of ${modelNames.join(', ')}, given ${kind}`);
    this.data = data;
    this.seed = seed;
    this.kind = kind;
    this.training = training ?? spec.training;
    this.model = new attn[spec.className]({
      srcVocabSize: data.srcVocab.length, tgtVocabSize: data.tgtVocab.length, ...(model ?? spec.model), seed,
    });
    this.ids = { pad: data.tgtVocab.get(PAD), bos: data.tgtVocab.get(BOS), eos: data.tgtVocab.get(EOS) };
    this.steps = 0;
    this.epoch = 0;
    this.rows = 0; // training rows seen in this epoch
    this.batchIterator = null;
    this.labels = data.heldOutPairs.map((p) => p.tgt);
  }

  /** Whether the model attends over the source (the plain decoder does not). */
  get attention() {
    return this.kind !== 'plain';
  }

  dispose() {
    this.model.dispose();
  }

  get epochSize() {
    return this.data.train.srcValidLens.length;
  }

  /** Fractional epochs done. */
  get progress() {
    return this.epoch + this.rows / this.epochSize;
  }

  #nextBatch() {
    this.batchIterator ??= batches(this.data.train, {
      batchSize: this.training.batchSize, shuffle: true, seed: (this.seed + 1) * 100003 + this.epoch,
    });
    return this.batchIterator.next().value;
  }

  /** One clipped Adam step on the next batch: { loss, tokens (labels other than '<pad>') }. */
  trainStep() {
    const b = this.#nextBatch();
    const { pad } = this.ids;
    const loss = this.model.trainStep(b.src, b.srcValidLens, b.tgtInput, b.tgtOutput, {
      pad, lr: this.training.lr, clip: this.training.clip,
    });
    let tokens = 0;
    for (const id of b.tgtOutput.data) if (id !== pad) tokens += 1;
    this.steps += 1;
    this.rows += b.srcValidLens.length;
    // The epoch counts as done with its last batch, so `epoch` never lags a finished epoch.
    if (this.rows >= this.epochSize) {
      this.epoch += 1;
      this.rows = 0;
      this.batchIterator = null;
    }
    return { loss, tokens };
  }

  /**
   * Greedy translation of source arrays: { tokens: string[][], lengths, attention [B, maxLen, Ts]
   * or null, cross: a Transformer's cross-attention (an array over its decoder blocks of
   * [B, heads, maxLen, Ts]) or null, maxLen }. A Transformer's `attention` is its last block's
   * cross-attention, averaged over the heads.
   */
  #translate(src, srcValidLens) {
    const maxLen = this.data.numSteps + 2;
    const out = this.model.translate(src, srcValidLens, { bos: this.ids.bos, eos: this.ids.eos, maxLen });
    const [B] = out.tokens.shape;
    const tokens = Array.from({ length: B }, (_, i) => decodeTokens(out.tokens.data.subarray(i * maxLen, (i + 1) * maxLen), this.data.tgtVocab));
    const cross = out.attention?.decoderCross ?? null;
    return { tokens, lengths: out.lengths, attention: cross ? meanOverHeads(cross.at(-1)) : out.attention, cross, maxLen };
  }

  /**
   * A Transformer's encoder self-attention over the sources (an array over its blocks of
   * [B, heads, Ts, Ts]). The encoder does not depend on the target, so the forward is given '<bos>'
   * alone to decode.
   */
  #encoderAttention(src, srcValidLens) {
    const [B] = src.shape;
    const bos = { data: new Int32Array(B).fill(this.ids.bos), shape: [B, 1] };
    return this.model.forward(src, srcValidLens, bos).attention.encoder;
  }

  /**
   * Held-out BLEU: { bleu (mean sentence BLEU, k = 2), exact (share of exact translations),
   * byLength: [{ from, to, count, bleu }] by source length in words, long: the mean over sources
   * of LONG_WORDS words or more (NaN without any) }.
   */
  evaluate() {
    const { src, srcValidLens } = this.data.heldOut;
    const { tokens } = this.#translate(src, srcValidLens);
    const preds = tokens.map((t) => t.join(' '));
    const scores = sentenceBleus(preds, this.labels, BLEU_K);
    const lengths = this.data.heldOutPairs.map((p) => p.src.split(' ').filter(Boolean).length);
    return {
      bleu: mean(scores),
      exact: mean(preds.map((p, i) => (p === this.labels[i] ? 1 : 0))),
      // Buckets of 3 lengths for the long-sentence task, whose 300 held-out pairs spread over 30.
      byLength: bleuByLength(lengths, scores, { width: this.data.numSteps > 16 ? 3 : 1 }),
      long: mean(scores.filter((_, i) => lengths[i] >= LONG_WORDS)),
    };
  }

  /**
   * Greedy translations of sentences as a visitor types them (`prepare` turns the text into the
   * corpus's spelling): [{ source: tokens incl. '<eos>', unknown: Set of source positions read
   * as '<unk>', output: tokens incl. '<eos>' when produced, attention: Float32Array
   * [output.length × source.length] or null, heads }]. With { heads: true }, a Transformer's
   * `heads` are every head of every block, { encoder, cross }: each an array over the blocks of
   * an array over the heads of Float32Array, source.length × source.length (encoder
   * self-attention) or output.length × source.length (decoder cross-attention); otherwise null.
   */
  translateText(texts, prepare, { heads = false } = {}) {
    const prepared = texts.map(prepare);
    const encoded = encodeSources(prepared, this.data.srcVocab, this.data.numSteps);
    const { tokens, lengths, attention, cross, maxLen } = this.#translate(encoded.src, encoded.srcValidLens);
    const encoder = heads && cross ? this.#encoderAttention(encoded.src, encoded.srcValidLens) : null;
    const Ts = this.data.numSteps;
    return texts.map((_, i) => {
      const source = encoded.tokens[i].slice(0, Ts);
      const cols = encoded.srcValidLens[i];
      const rows = lengths[i];
      const output = tokens[i].length < rows ? [...tokens[i], EOS] : tokens[i];
      const unknown = new Set(encoded.unknown.filter((u) => u.row === i).map((u) => u.position));
      return {
        source: source.slice(0, cols), unknown, output: output.slice(0, rows),
        attention: attention ? cutMatrix(attention.data, i, [maxLen, Ts], rows, cols) : null,
        heads: encoder ? {
          encoder: encoder.map((block) => headMatrices(block, i, cols, cols)),
          cross: cross.map((block) => headMatrices(block, i, rows, cols)),
        } : null,
      };
    });
  }
}
