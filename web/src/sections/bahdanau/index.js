// 5. Bahdanau attention and the Transformer: learning to align. d2l's GRU encoder-decoder with
// additive attention (the package's Seq2SeqAttention), or another model of the menu (d2l's
// Transformer, a decoder without attention), trained in the page; and the comparison with and
// without attention by source length. A configuration of the seq2seq section (../seq2seq/).

import { mountSeq2SeqSection } from '../seq2seq/index.js';
import { COMPARE_TEXT, TEXT } from './explanation.js';

const MODELS_ON_OFFER = ['bahdanau', 'plain', 'transformer'];

export const BAHDANAU_SECTION = {
  number: 5,
  title: 'Bahdanau attention and the Transformer: learning to align',
  prefix: 'bd',
  models: MODELS_ON_OFFER,
  text: TEXT,
  probeTitle: 'Alignment of the probe sentence (not a training pair)',
  headsTitle: 'The Transformer’s heads on the probe sentence, every block',
  beside: { kinds: MODELS_ON_OFFER, hint: 'choose it in the model menu and train it, and its curve is drawn here, dashed' },
  comparison: COMPARE_TEXT,
};

export const mountBahdanau = (root) => mountSeq2SeqSection(root, BAHDANAU_SECTION);
