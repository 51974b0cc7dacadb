// d2l's Vocab (d2l/torch.py, sec_text-sequence), with its exact index order: the token list is
// sorted(set(['<unk>'] + reserved_tokens + frequent tokens)), i.e. by code point, so '<bos>',
// '<eos>', '<pad>', '<unk>' come after digits and most punctuation but before letters. Python
// sorts str by code point and JS compares UTF-16 code units; the two agree for every character
// in the Basic Multilingual Plane (all the corpora here).

import { UNK } from './text.js';

const byCodePoint = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

export class Vocab {
  /**
   * `tokens`: a list of tokens or a list of token lists (flattened, as d2l does). Tokens seen
   * fewer than `minFreq` times are left out (they map to '<unk>'); `reservedTokens` are kept
   * whatever their count.
   */
  constructor(tokens = [], { minFreq = 0, reservedTokens = [] } = {}) {
    if (!Array.isArray(tokens)) throw new TypeError(`tokens: expected an array, given ${typeof tokens}`);
    if (!Number.isFinite(minFreq)) throw new RangeError(`minFreq: expected a number, given ${minFreq}`);
    const flat = Array.isArray(tokens[0]) ? tokens.flat() : tokens;
    const counts = new Map();
    for (const token of flat) counts.set(token, (counts.get(token) ?? 0) + 1);
    // collections.Counter keeps first-seen order; Python's sort and JS's are both stable.
    /** [token, count] pairs, most frequent first (d2l's token_freqs). */
    this.tokenFreqs = [...counts].sort((a, b) => b[1] - a[1]);
    const kept = this.tokenFreqs.filter(([, count]) => count >= minFreq).map(([token]) => token);
    this.#init([...new Set([UNK, ...reservedTokens, ...kept])].sort(byCodePoint));
  }

  /** A vocabulary with exactly this token list (e.g. saved beside a trained model). */
  static fromTokens(idxToToken) {
    if (!Array.isArray(idxToToken) || !idxToToken.includes(UNK)) {
      throw new TypeError(`idxToToken: expected an array of tokens including '${UNK}'`);
    }
    if (new Set(idxToToken).size !== idxToToken.length) throw new RangeError('idxToToken: tokens must be distinct');
    const vocab = new Vocab();
    vocab.#init([...idxToToken]);
    return vocab;
  }

  #tokenToIdx = new Map();

  #init(idxToToken) {
    /** The tokens by index (d2l's idx_to_token). */
    this.idxToToken = idxToToken;
    this.#tokenToIdx = new Map(idxToToken.map((token, i) => [token, i]));
  }

  get length() {
    return this.idxToToken.length;
  }

  /** Index of '<unk>' (d2l's vocab.unk). */
  get unk() {
    return this.#tokenToIdx.get(UNK);
  }

  /** True when `token` has its own index (is not mapped to '<unk>'). */
  has(token) {
    return this.#tokenToIdx.has(token);
  }

  /** d2l's vocab[token] / vocab[tokens]: an index, or a list of indices; unknown -> unk. */
  get(tokens) {
    if (Array.isArray(tokens)) return tokens.map((t) => this.get(t));
    return this.#tokenToIdx.get(tokens) ?? this.unk;
  }

  /** d2l's to_tokens: indices (any array-like) -> tokens; a single index -> one token. */
  toTokens(indices) {
    if (typeof indices === 'number') return this.#token(indices);
    return Array.from(indices, (i) => this.#token(i));
  }

  #token(index) {
    if (!Number.isInteger(index) || index < 0 || index >= this.length) {
      throw new RangeError(`index: expected an integer in [0, ${this.length}), given ${index}`);
    }
    return this.idxToToken[index];
  }

  /** The token list, for JSON.stringify; Vocab.fromTokens reads it back. */
  toJSON() {
    return this.idxToToken;
  }
}
