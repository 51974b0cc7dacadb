// 6. The Transformer: attention is all you need. d2l 11.7's encoder-decoder (the package's
// Transformer) trained in the page, every head of every block drawn on the probe sentence as it
// learns, its BLEU curve beside the last Bahdanau run of section 5. One of the two
// configurations of the seq2seq section (../seq2seq/; the other is Bahdanau's, section 5).

import { mountSeq2SeqSection } from '../seq2seq/index.js';
import { TEXT } from './explanation.js';

export const TRANSFORMER_SECTION = {
  number: 6,
  title: 'The Transformer: attention is all you need',
  prefix: 'tf',
  models: ['transformer'],
  text: TEXT,
  probeTitle: 'Alignment of the probe sentence (not a training pair): the last block’s cross-attention, mean over its heads',
  headsTitle: 'Every head on the probe sentence, block by block',
  beside: { kinds: ['bahdanau'], hint: 'train one in section 5 (“Train from scratch”), and its curve is drawn here, dashed' },
};

export const mountTransformer = (root) => mountSeq2SeqSection(root, TRANSFORMER_SECTION);
