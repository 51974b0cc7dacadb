// d2l's BLEU (sec_seq2seq_training, d2l/torch.py `bleu`), line for line:
//   exp(min(0, 1 - len_label / len_pred)) * prod_{n=1}^{min(k, len_pred)} p_n^(1/2^n),
// p_n = clipped n-gram matches / (len_pred - n + 1). Sequences are split on single spaces as
// d2l does, so '' is one empty token and '' vs '' scores 1. It is a sentence-level score with no
// smoothing: one n-gram order without a match makes it 0.

const tokensOf = (seq, name) => {
  if (typeof seq === 'string') return seq.split(' ');
  // Token lists go through the same join/split, so ['a b'] and [] read as d2l would read them.
  if (Array.isArray(seq)) return seq.join(' ').split(' ');
  throw new TypeError(`${name}: expected a string or an array of tokens, given ${typeof seq}`);
};

/** d2l's bleu(pred_seq, label_seq, k): strings of space-separated tokens, or token arrays. */
export function bleu(predSeq, labelSeq, k) {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k: expected a positive integer, given ${k}`);
  const pred = tokensOf(predSeq, 'predSeq');
  const label = tokensOf(labelSeq, 'labelSeq');
  let score = Math.exp(Math.min(0, 1 - label.length / pred.length));
  for (let n = 1; n <= Math.min(k, pred.length); n++) {
    const labelSubs = new Map();
    for (let i = 0; i + n <= label.length; i++) {
      const gram = label.slice(i, i + n).join(' ');
      labelSubs.set(gram, (labelSubs.get(gram) ?? 0) + 1);
    }
    let matches = 0;
    for (let i = 0; i + n <= pred.length; i++) {
      const gram = pred.slice(i, i + n).join(' ');
      if ((labelSubs.get(gram) ?? 0) > 0) {
        matches += 1;
        labelSubs.set(gram, labelSubs.get(gram) - 1);
      }
    }
    score *= Math.pow(matches / (pred.length - n + 1), Math.pow(0.5, n));
  }
  return score;
}

/** Sentence BLEU of each (prediction, label) pair; `k` as in bleu. */
export function sentenceBleus(preds, labels, k) {
  if (!Array.isArray(preds) || !Array.isArray(labels) || preds.length !== labels.length) {
    throw new RangeError(`preds, labels: expected two arrays of one length, given ${preds?.length} and ${labels?.length}`);
  }
  return preds.map((p, i) => bleu(p, labels[i], k));
}

/**
 * Held-out BLEU as d2l reports it per sentence, averaged: the mean sentence BLEU (not the
 * corpus-level BLEU of Papineni et al., which pools n-gram counts). NaN for no sentences.
 */
export function corpusBleu(preds, labels, k) {
  const scores = sentenceBleus(preds, labels, k);
  return scores.reduce((a, b) => a + b, 0) / scores.length;
}

/**
 * BLEU against source length, for the with/without-attention plot (Bahdanau et al., fig. 2):
 * sentence scores grouped by source length (in tokens, without '<eos>') into buckets
 * [from, to] of `width` lengths, starting at 1. Returns the non-empty buckets in order:
 * [{ from, to, count, bleu (mean) }].
 */
export function bleuByLength(srcLengths, scores, { width = 1 } = {}) {
  if (srcLengths.length !== scores.length) {
    throw new RangeError(`srcLengths, scores: expected one length, given ${srcLengths.length} and ${scores.length}`);
  }
  if (!Number.isInteger(width) || width < 1) throw new RangeError(`width: expected a positive integer, given ${width}`);
  const buckets = new Map();
  srcLengths.forEach((len, i) => {
    if (!Number.isInteger(len) || len < 1) throw new RangeError(`srcLengths[${i}]: expected a positive integer, given ${len}`);
    const from = Math.floor((len - 1) / width) * width + 1;
    const b = buckets.get(from) ?? { from, to: from + width - 1, count: 0, sum: 0 };
    b.count += 1;
    b.sum += scores[i];
    buckets.set(from, b);
  });
  return [...buckets.values()]
    .sort((a, b) => a.from - b.from)
    .map(({ from, to, count, sum }) => ({ from, to, count, bleu: sum / count }));
}
