// CausalLM: a decoder-only language model in GPT-2's and Llama's shapes (attn/causal_lm.hpp),
// its parameters under Hugging Face's names (model.js: state dict, dispose()). Here: the
// configuration and its presets, the forward with every layer's attention map, the next-token
// loss with its gradients, the AdamW step, and generation through a KV cache per layer. Token tensors are { data: Int32Array, shape }.

import {
  readBoolean, readFloat32, readOptions, readPositiveInteger, readSize, readString, readTensor, shapeString,
} from './arguments.js';
import { check, output, withHeap } from './heap.js';
import { initialisedHandle } from './handle.js';
import { HANDLE, createModelBase } from './model.js';

// The core's argument names, as this API spells them.
const NAMES = {
  vocab_size: 'vocabSize', hidden_size: 'hiddenSize', num_layers: 'numLayers', num_heads: 'numHeads',
  num_kv_heads: 'numKvHeads', intermediate_size: 'intermediateSize', max_positions: 'maxPositions',
  rotary_base: 'rotaryBase', norm_eps: 'normEps', weight_decay: 'weightDecay', head_mask: 'headMask',
};

const GENERATE_NAMES = {
  ...NAMES, max_new_tokens: 'maxNewTokens', top_k: 'topK', top_p: 'topP',
};

// Each enum of the config: its names in the core's order (the index crosses).
const CHOICES = {
  format: ['gpt2', 'llama'],
  positions: ['learned', 'rotary', 'none'],
  norm: ['layer', 'rms'],
  mlp: ['gelu', 'swiglu'],
};

const PRESETS = {
  gpt2: {
    format: 'gpt2', positions: 'learned', norm: 'layer', normEps: 1e-5, mlp: 'gelu', bias: true, tieEmbeddings: true,
  },
  llama: {
    format: 'llama', positions: 'rotary', norm: 'rms', normEps: 1e-6, mlp: 'swiglu', bias: false, tieEmbeddings: false,
  },
};

const KEYS = [
  'format', 'vocabSize', 'hiddenSize', 'numLayers', 'numHeads', 'numKvHeads', 'intermediateSize', 'maxPositions',
  'positions', 'rotaryBase', 'norm', 'normEps', 'mlp', 'bias', 'tieEmbeddings', 'window', 'dropout', 'seed',
];

function readChoice(name, value, fallback) {
  const choices = CHOICES[name];
  const given = readString(name, value, fallback, choices);
  if (!choices.includes(given)) {
    throw new RangeError(`${name}: expected ${choices.map((c) => `'${c}'`).join(' | ')}, got '${given}'`);
  }
  return given;
}

function readConfig(config) {
  const c = readOptions('config', config, KEYS, { required: true });
  const fields = {
    format: readChoice('format', c.format, 'gpt2'),
    vocabSize: readPositiveInteger('vocabSize', c.vocabSize),
    hiddenSize: readPositiveInteger('hiddenSize', c.hiddenSize),
    numLayers: readPositiveInteger('numLayers', c.numLayers),
    numHeads: readPositiveInteger('numHeads', c.numHeads),
    numKvHeads: readSize('numKvHeads', c.numKvHeads ?? 0),
    intermediateSize: readSize('intermediateSize', c.intermediateSize ?? 0),
    maxPositions: readSize('maxPositions', c.maxPositions ?? 0),
    positions: readChoice('positions', c.positions, 'learned'),
    rotaryBase: readFloat32('rotaryBase', c.rotaryBase, 10000),
    norm: readChoice('norm', c.norm, 'layer'),
    normEps: readFloat32('normEps', c.normEps, 1e-5),
    mlp: readChoice('mlp', c.mlp, 'gelu'),
    bias: readBoolean('bias', c.bias, true),
    tieEmbeddings: readBoolean('tieEmbeddings', c.tieEmbeddings, true),
    window: readSize('window', c.window ?? 0),
    dropout: readFloat32('dropout', c.dropout, 0),
    seed: readSize('seed', c.seed ?? 0, Number.MAX_SAFE_INTEGER),
  };
  if (fields.numKvHeads === 0) fields.numKvHeads = fields.numHeads;
  return fields;
}

const indexOf = (fields) => Object.fromEntries(
  Object.entries(fields).map(([key, value]) => [key, CHOICES[key] ? CHOICES[key].indexOf(value) : value]),
);

const readTokens = (value) => readTensor('tokens', value, { types: ['Int32Array'], expected: [-1, -1] });
const tokenArg = (pointer, record) => ({ data: pointer, batch: record.shape[0], steps: record.shape[1] });
// [layers, heads] finite factors: a tensor of that shape, or a bare Float32Array of their count.
function readHeadMask(value, layers, heads) {
  const record = readTensor('headMask', value, { bare: true });
  const shape = record.shape.length === 1 ? [layers * heads] : [layers, heads];
  if (record.shape.length > 2 || record.shape.some((s, i) => s !== shape[i])) {
    throw new RangeError(`headMask: expected shape [${layers}, ${heads}] ([numLayers, numHeads]) or ${layers * heads} values, got ${shapeString(record.shape)}`);
  }
  const at = record.data.findIndex((x) => !Number.isFinite(x));
  if (at >= 0) {
    throw new RangeError(`headMask: expected finite numbers, got ${record.data[at]} at layer ${Math.floor(at / heads)}, head ${at % heads}`);
  }
  return record;
}

const size = (shape) => shape.reduce((a, b) => a * b, 1);
const sameValues = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

export function createCausalLMClass(module) {
  return class CausalLM extends createModelBase(module) {
    /** A model in GPT-2's shape (learned positions, LayerNorm, GELU, biases, tied): sizes from overrides. */
    static gpt2(overrides) {
      return new this({ ...PRESETS.gpt2, ...overrides });
    }

    /** A model in Llama's shape (rotary, RMSNorm, SwiGLU, no biases, untied): sizes from overrides. */
    static llama(overrides) {
      return new this({ ...PRESETS.llama, ...overrides });
    }

    constructor(config) {
      const fields = readConfig(config);
      const handle = initialisedHandle(module.CausalLM, (h) => h.init(indexOf(fields)), (status) => check(status, NAMES));
      super(handle, 'CausalLM');
      this.config = Object.freeze(fields);
    }

    // Runs one core call with the tokens in the heap: body(handle, scope, tokens, pointers).
    #call(tokens, outputs, body) {
      const handle = this[HANDLE]();
      return withHeap(module, [tokens, ...outputs], (scope) => {
        const pointers = outputs.map((out) => scope.alloc(out));
        return body(handle, scope, tokenArg(scope.put(tokens), tokens), pointers);
      });
    }

    /**
     * tokens [B, T] -> { logits [B, T, vocabSize] } and, with { attention: true }, attention: an
     * array over layers of [B, numHeads, T, T] weights. headMask, [numLayers, numHeads] factors
     * (a tensor or a bare Float32Array), multiplies each head's weights: 0 ablates the head.
     */
    forward(tokens, options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['attention', 'headMask']);
      const wantMaps = readBoolean('attention', o.attention, false);
      const record = readTokens(tokens);
      const [B, T] = record.shape;
      const { vocabSize, numHeads, numLayers } = this.config;
      const mask = o.headMask == null ? null : readHeadMask(o.headMask, numLayers, numHeads);
      const logits = output('logits', [B, T, vocabSize]);
      const mapShape = [B, numHeads, T, T];
      const maps = wantMaps ? [output('attention', [numLayers * size(mapShape)])] : [];
      return this.#call(record, [logits, ...maps], (handle, scope, arg, [logitsPointer, mapsPointer]) => {
        const maskPointer = mask ? scope.put(mask) : 0;
        check(handle.forward(arg, maskPointer, logitsPointer, mapsPointer ?? 0), NAMES);
        const result = { logits: scope.take(logitsPointer, logits) };
        if (wantMaps) {
          const data = scope.take(mapsPointer, maps[0]).data;
          result.attention = Array.from({ length: numLayers }, (_, l) => ({
            data: data.slice(l * size(mapShape), (l + 1) * size(mapShape)), shape: [...mapShape],
          }));
        }
        return result;
      });
    }

    /**
     * tokens [B, T + 1] -> { loss, gradients: { name: tensor } }: the mean next-token
     * cross-entropy of tokens[:, 1:] given tokens[:, :T], targets equal to `pad` left out, and
     * every parameter's gradient (a tied model's unembedding in the embedding's). With dropout,
     * as in training: each call drops from a fresh stream.
     */
    lossAndGradients(tokens, options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['pad']);
      const pad = o.pad === undefined ? -1 : readSize('pad', o.pad);
      const record = readTokens(tokens);
      const loss = output('loss', [1]);
      const gradients = this.flatParameters('gradients');
      return this.#call(record, [loss, gradients], (handle, scope, arg, [lossPointer, gradientsPointer]) => {
        check(handle.lossAndGradients(arg, pad, lossPointer, gradientsPointer), NAMES);
        return {
          loss: scope.take(lossPointer, loss).data[0],
          gradients: this.splitParameters(scope.take(gradientsPointer, gradients).data),
        };
      });
    }

    /**
     * One torch.optim.AdamW step (decoupled weight decay on the tensors of 2 or more dims, as
     * nanoGPT groups them) after clipping the gradients' global norm to `clip` (0: none).
     * Returns the loss before the step.
     */
    trainStep(tokens, options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['lr', 'betas', 'eps', 'weightDecay', 'clip', 'pad']);
      const lr = readFloat32('lr', o.lr, 1e-3);
      const betas = o.betas ?? [0.9, 0.999];
      if (!Array.isArray(betas) || betas.length !== 2) {
        throw new TypeError(`betas: expected an array [beta1, beta2], got ${JSON.stringify(betas)}`);
      }
      const beta1 = readFloat32('betas[0]', betas[0]);
      const beta2 = readFloat32('betas[1]', betas[1]);
      const eps = readFloat32('eps', o.eps, 1e-8);
      const weightDecay = readFloat32('weightDecay', o.weightDecay, 0);
      const clip = readFloat32('clip', o.clip, 0);
      const pad = o.pad === undefined ? -1 : readSize('pad', o.pad);
      const record = readTokens(tokens);
      const loss = output('loss', [1]);
      const names = { ...NAMES, beta1: 'betas[0]', beta2: 'betas[1]' };
      return this.#call(record, [loss], (handle, scope, arg, [lossPointer]) => {
        check(handle.trainStep(arg, lr, beta1, beta2, eps, weightDecay, clip, pad, lossPointer), names);
        return scope.take(lossPointer, loss).data[0];
      });
    }

    /**
     * Continues prompt [B, T0] by maxNewTokens tokens with a KV cache per layer -> { tokens:
     * Int32 [B, T0 + maxNewTokens] (the prompt first; after a row's first eos, eos), lengths:
     * Int32Array [B] }. temperature 0 is greedy; otherwise each token is drawn from
     * softmax(logits / temperature) over the topK most likely (0: all), then over the most likely
     * whose probabilities before them sum to less than topP, as Hugging Face's warpers restrict
     * it. The same seed gives the same tokens. headMask, as forward's, generates with heads
     * ablated.
     */
    generate(prompt, options) {
      this[HANDLE]();
      const o = readOptions('options', options, ['maxNewTokens', 'temperature', 'topK', 'topP', 'seed', 'eos', 'headMask'], { required: true });
      const maxNewTokens = readSize('maxNewTokens', o.maxNewTokens);
      const temperature = readFloat32('temperature', o.temperature, 1);
      const topK = readSize('topK', o.topK ?? 0);
      const topP = readFloat32('topP', o.topP, 1);
      const seed = readSize('seed', o.seed ?? 0, Number.MAX_SAFE_INTEGER);
      const eos = o.eos === undefined ? -1 : readSize('eos', o.eos);
      const { numHeads, numLayers } = this.config;
      const mask = o.headMask == null ? null : readHeadMask(o.headMask, numLayers, numHeads);
      const record = readTensor('prompt', prompt, { types: ['Int32Array'], expected: [-1, -1] });
      const [B, T0] = record.shape;
      const tokens = output('tokens', [B, T0 + maxNewTokens], 'Int32Array');
      const lengths = output('lengths', [B], 'Int32Array');
      return this.#call(record, [tokens, lengths], (handle, scope, arg, [tokensPointer, lengthsPointer]) => {
        const maskPointer = mask ? scope.put(mask) : 0;
        check(handle.generate(arg, maxNewTokens, temperature, topK, topP, seed, eos, maskPointer, tokensPointer, lengthsPointer), GENERATE_NAMES);
        return { tokens: scope.take(tokensPointer, tokens), lengths: scope.take(lengthsPointer, lengths).data };
      });
    }

    /** AdamW steps taken so far. */
    get optimizerSteps() {
      return this[HANDLE]().optimizerSteps();
    }

    /** The state dict under Hugging Face's names; a tied model lists lm_head.weight too, as HF does. */
    stateDict() {
      const dict = super.stateDict();
      if (this.config.tieEmbeddings) {
        const embedding = dict[this.parameters[0].name];
        dict['lm_head.weight'] = { data: embedding.data.slice(), shape: [...embedding.shape] };
      }
      return dict;
    }

    /**
     * Loads a state dict under Hugging Face's names (a checkpoint read by readSafetensors loads
     * as it is). A tied model takes lm_head.weight only with the embedding's values, or none.
     */
    loadStateDict(dict) {
      if (this.config.tieEmbeddings && dict !== null && typeof dict === 'object' && 'lm_head.weight' in dict) {
        const embeddingName = this.parameters[0].name;
        const { 'lm_head.weight': unembedding, ...rest } = dict;
        const embedding = rest[embeddingName];
        if (embedding && unembedding && !sameValues(unembedding.data ?? [], embedding.data ?? [])) {
          throw new RangeError(`dict: 'lm_head.weight' must hold the values of '${embeddingName}' (tied embeddings)`);
        }
        return super.loadStateDict(rest);
      }
      return super.loadStateDict(dict);
    }
  };
}
