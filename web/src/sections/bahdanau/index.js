// 5. Bahdanau attention: learning to align. d2l's GRU encoder-decoder with additive attention
// (the package's Seq2SeqAttention), or the same GRU without attention, trained in the page; and
// the two beside the Transformer by source length. One of the two configurations of the
// seq2seq section (../seq2seq/; the other is the Transformer's, section 6).

import { mountSeq2SeqSection } from '../seq2seq/index.js';
import { COMPARE_TEXT, TEXT } from './explanation.js';

export const BAHDANAU_SECTION = {
  number: 5,
  title: 'Bahdanau attention: learning to align',
  prefix: 'bd',
  models: ['bahdanau', 'plain'],
  text: TEXT,
  probeTitle: 'Alignment of the probe sentence (not a training pair)',
  beside: { kinds: ['bahdanau', 'plain'], hint: 'choose it in the model menu and train it, and its curve is drawn here, dashed' },
  comparison: { text: COMPARE_TEXT, kinds: ['bahdanau', 'transformer', 'plain'] },
};

export const mountBahdanau = (root) => mountSeq2SeqSection(root, BAHDANAU_SECTION);
