// CausalLM in the three builds, against GPT-2 and Llama written out in PyTorch as Hugging Face
// defines them (tests/fixtures/causal_lm, written by scripts/fixtures/causal_lm.py): logits and
// every attention map, loss, every gradient, two clipped AdamW steps, the state dict under HF's
// names (a tied model's lm_head.weight included), greedy generation through the KV caches; then
// sampling, the presets and the errors.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { backends, labelOf } from './backends.js';
import * as fx from './fixtures.js';

const cases = fx.loadFixture('causal_lm/causal_lm.json');

const ints = ({ data, shape }) => ({ data: Int32Array.from(data), shape: [...shape] });
const close = (got, want) => Math.abs(got - want) <= 2e-4 * Math.abs(want);

// The fixture's config (snake_case, 'none' for no MLP) as the API's.
function configOf(c) {
  return {
    format: c.format, vocabSize: c.vocab_size, hiddenSize: c.hidden_size, numLayers: c.num_layers,
    numHeads: c.num_heads, numKvHeads: c.num_kv_heads, intermediateSize: c.intermediate_size,
    maxPositions: c.max_positions, positions: c.positions, rotaryBase: c.rotary_base ?? undefined,
    norm: c.norm, normEps: c.norm_eps, mlp: c.mlp === 'none' ? undefined : c.mlp, bias: c.bias,
    tieEmbeddings: c.tie_embeddings,
  };
}

function modelOf(attn, inputs) {
  const dict = Object.fromEntries(Object.entries(inputs.state_dict).map(([name, t]) => [name, fx.floatTensor(t)]));
  return new attn.CausalLM(configOf(inputs.config)).loadStateDict(dict);
}

// Greedy decoding by re-running forward over the whole prefix (with its options) at each step.
function rerunGreedy(m, { data, shape: [B, T0] }, newTokens, options) {
  const V = m.config.vocabSize;
  let tokens = Int32Array.from(data), T = T0;
  for (let n = 0; n < newTokens; n++) {
    const { logits } = m.forward({ data: tokens, shape: [B, T] }, options);
    const next = new Int32Array(B * (T + 1));
    for (let b = 0; b < B; b++) {
      next.set(tokens.subarray(b * T, (b + 1) * T), b * (T + 1));
      const row = logits.data.subarray(((b + 1) * T - 1) * V, (b + 1) * T * V);
      next[b * (T + 1) + T] = row.indexOf(Math.max(...row));
    }
    tokens = next;
    T += 1;
  }
  return [...tokens];
}

// tokens[:, :T] of the fixture's [B, T + 1].
function inputsOf({ data, shape: [B, T1] }) {
  const out = new Int32Array(B * (T1 - 1));
  for (let b = 0; b < B; b++) out.set(data.slice(b * T1, (b + 1) * T1 - 1), b * (T1 - 1));
  return { data: out, shape: [B, T1 - 1] };
}

for (const attn of backends) {
  describe(`CausalLM against GPT-2 and Llama in PyTorch (${labelOf(attn)})`, () => {
    for (const { name, inputs, options, expected } of cases) {
      const pad = inputs.config.pad ?? undefined;

      test(`${name}: logits, attention maps, loss and gradients`, () => {
        const m = modelOf(attn, inputs);
        const out = m.forward(inputsOf(inputs.tokens), { attention: true });
        fx.assertFixtureClose(out.logits, expected.logits, expected, 'logits');
        assert.equal(out.attention.length, expected.attentions.length);
        expected.attentions.forEach((want, l) => fx.assertFixtureClose(out.attention[l], want, want, `layer ${l}`));
        assert.equal(m.forward(inputsOf(inputs.tokens)).attention, undefined);
        const { loss, gradients } = m.lossAndGradients(ints(inputs.tokens), { pad });
        assert.ok(close(loss, expected.loss), `loss ${loss} vs ${expected.loss}`);
        fx.assertNamedClose(gradients, expected.gradients, expected, 'gradient of');
        m.dispose();
      });

      // A head reaches the residual stream only through its rows (Conv1D [in, out]) or columns
      // (nn.Linear [out, in]) of the output projection: masking it by m is those weights times m.
      test(`${name}: headMask scales a head as scaling its output projection does`, () => {
        const m = modelOf(attn, inputs);
        const { numLayers: L, numHeads: H, hiddenSize, format } = m.config;
        const tokens = inputsOf(inputs.tokens);
        const mask = new Float32Array(L * H).fill(1);
        mask[H - 1] = 0.5;
        mask[(L - 1) * H] = 0;
        const masked = m.forward(tokens, { attention: true, headMask: { data: mask, shape: [L, H] } });
        const plain = m.forward(tokens);
        assert.deepEqual(m.forward(tokens, { headMask: new Float32Array(L * H).fill(1) }).logits, plain.logits);
        const dict = m.stateDict();
        const dim = hiddenSize / H;
        for (let l = 0; l < L; l++) {
          const w = dict[format === 'gpt2' ? `transformer.h.${l}.attn.c_proj.weight` : `model.layers.${l}.self_attn.o_proj.weight`];
          for (let i = 0; i < hiddenSize; i++) {
            for (let o = 0; o < hiddenSize; o++) w.data[format === 'gpt2' ? i * hiddenSize + o : o * hiddenSize + i] *= mask[l * H + Math.floor(i / dim)];
          }
        }
        const reference = new attn.CausalLM(m.config).loadStateDict(dict);
        const want = reference.forward(tokens, { attention: true });
        masked.logits.data.forEach((x, i) => assert.ok(Math.abs(x - want.logits.data[i]) <= 1e-5, `logit ${i}: ${x} vs ${want.logits.data[i]}`));
        // The maps: the scaled model's, each head's times its factor.
        masked.attention.forEach((map, l) => {
          const per = map.shape[2] * map.shape[3];
          map.data.forEach((x, i) => {
            const expected = want.attention[l].data[i] * mask[l * H + (Math.floor(i / per) % H)];
            assert.ok(Math.abs(x - expected) <= 1e-6, `layer ${l}, weight ${i}: ${x} vs ${expected}`);
          });
        });
        assert.throws(() => m.forward(tokens, { headMask: new Float32Array(L * H + 1) }), { name: 'RangeError', message: /^headMask: expected shape \[\d+, \d+\]/ });
        assert.throws(() => m.forward(tokens, { headMask: mask.map((x, i) => (i === 1 ? NaN : x)) }), { name: 'RangeError', message: /^headMask: expected finite numbers, got NaN at layer 0, head 1/ });
        assert.throws(() => m.forward(tokens, { headMask: [1, 1] }), { name: 'TypeError', message: /^headMask: / });
        m.dispose();
        reference.dispose();
      });

      test(`${name}: the state dict under Hugging Face's names, then two clipped AdamW steps`, () => {
        const m = modelOf(attn, inputs);
        assert.deepEqual(Object.keys(m.stateDict()), Object.keys(inputs.state_dict));
        fx.assertNamedClose(m.stateDict(), inputs.state_dict, inputs, 'state dict');
        const { lr, betas, eps, weight_decay: weightDecay, clip } = options.adamw;
        for (const want of expected.adamw.losses) {
          const loss = m.trainStep(ints(inputs.tokens), { lr, betas, eps, weightDecay, clip, pad });
          assert.ok(close(loss, want), `loss ${loss} vs ${want}`);
        }
        assert.equal(m.optimizerSteps, 2);
        // Entries whose exact gradient is 0 take AdamW steps of up to lr on rounding: within 3 lr.
        const dict = m.stateDict();
        for (const [entry, want] of Object.entries(expected.adamw.state_dict)) {
          const [first, last] = expected.zero_gradient_entries[entry] ?? [0, 0];
          const peak = Math.max(...want.data.map(Math.abs));
          dict[entry].data.forEach((got, i) => {
            const bound = i >= first && i < last ? 3 * lr : 2e-4 * peak;
            assert.ok(Math.abs(got - want.data[i]) <= bound, `${entry}[${i}]: ${got} vs ${want.data[i]}`);
          });
        }
        m.dispose();
      });
    }

    for (const { name, inputs, options, expected } of cases) {
      test(`${name}: greedy generation through the KV caches continues the prompts`, () => {
        const m = modelOf(attn, inputs);
        const { tokens, lengths } = m.generate(ints(options.generate.prompt), { maxNewTokens: options.generate.max_new_tokens, temperature: 0 });
        assert.deepEqual(tokens.shape, expected.generate.tokens.shape);
        assert.deepEqual([...tokens.data], expected.generate.tokens.data);
        assert.deepEqual([...lengths], [7, 7]);
        m.dispose();
      });
    }

    test('generation with a headMask equals re-running forward with it, and the mask is checked', () => {
      for (const { inputs } of cases) {
        const m = modelOf(attn, inputs);
        const { numLayers: L, numHeads: H } = m.config;
        const mask = new Float32Array(L * H).fill(1);
        mask[0] = H > 1 || L > 1 ? 0 : 0.5;
        mask[L * H - 1] = 0.5;
        const prompt = { data: Int32Array.of(8, 4, 8, 2, 10, 3), shape: [2, 3] };
        const got = m.generate(prompt, { maxNewTokens: 5, temperature: 0, headMask: mask });
        assert.deepEqual([...got.tokens.data], rerunGreedy(m, prompt, 5, { headMask: mask }));
        assert.throws(() => m.generate(prompt, { maxNewTokens: 1, headMask: new Float32Array(L * H + 1) }), { name: 'RangeError', message: /^headMask: expected shape/ });
        m.dispose();
      }
    });

    test('sampling: the same seed the same tokens, top-k 1 is greedy, eos ends a row', () => {
      const m = modelOf(attn, cases[1].inputs);
      const prompt = { data: Int32Array.of(8, 4, 8, 2, 10, 3), shape: [2, 3] };
      const sampled = m.generate(prompt, { maxNewTokens: 6, temperature: 0.9, topP: 0.9, seed: 5 });
      assert.deepEqual(m.generate(prompt, { maxNewTokens: 6, temperature: 0.9, topP: 0.9, seed: 5 }).tokens.data, sampled.tokens.data);
      const greedy = m.generate(prompt, { maxNewTokens: 4, temperature: 0 });
      assert.deepEqual(m.generate(prompt, { maxNewTokens: 4, topK: 1, seed: 3 }).tokens.data, greedy.tokens.data);
      const eos = greedy.tokens.data[4];
      const ended = m.generate(prompt, { maxNewTokens: 4, temperature: 0, eos });
      assert.equal(ended.lengths[0], 5);
      assert.deepEqual([...ended.tokens.data.slice(5, 7)], [eos, eos]);
      assert.throws(() => m.generate(prompt, { maxNewTokens: 2, topP: 0 }), { name: 'RangeError', message: /^topP: / });
      assert.throws(() => m.generate(prompt, { maxNewTokens: 2, temperature: -1 }), { name: 'RangeError', message: /^temperature: / });
      assert.throws(() => m.generate(prompt, { maxNewTokens: 2, eos: 13 }), { name: 'RangeError', message: /^eos: / });
      assert.throws(() => m.generate(prompt, {}), { name: 'TypeError', message: /^maxNewTokens: / });
      assert.throws(() => m.generate(prompt), { name: 'TypeError', message: /^options: / });
      m.dispose();
    });

    test('the presets: GPT-2 and Llama shapes under their names, overridable', () => {
      const gpt2 = attn.CausalLM.gpt2({ vocabSize: 11, hiddenSize: 8, numLayers: 1, numHeads: 2, maxPositions: 4, intermediateSize: 16 });
      assert.equal(gpt2.config.positions, 'learned');
      assert.deepEqual(gpt2.parameters.map((p) => p.name).slice(0, 2), ['transformer.wte.weight', 'transformer.wpe.weight']);
      assert.deepEqual(gpt2.parameters.find((p) => p.name.endsWith('c_attn.weight')).shape, [8, 24]);
      assert.ok('lm_head.weight' in gpt2.stateDict());
      const llama = attn.CausalLM.llama({ vocabSize: 13, hiddenSize: 8, numLayers: 1, numHeads: 4, numKvHeads: 2, intermediateSize: 12, tieEmbeddings: true });
      assert.equal(llama.config.norm, 'rms');
      assert.deepEqual(llama.parameters.find((p) => p.name.endsWith('k_proj.weight')).shape, [4, 8]);
      // Tied: lm_head.weight comes back in the state dict and loads with the embedding's values, or without.
      const dict = llama.stateDict();
      llama.loadStateDict(dict);
      const { 'lm_head.weight': _, ...without } = dict;
      llama.loadStateDict(without);
      dict['lm_head.weight'].data[0] += 1;
      assert.throws(() => llama.loadStateDict(dict), { name: 'RangeError', message: /lm_head\.weight.*tied/ });
      gpt2.dispose();
      llama.dispose();
    });

    // The exact gradients under dropout are tests/cpp/test_causal_lm.cpp's (central differences):
    // here, that the option crosses the binding.
    test('dropout drops in training calls only, reproducibly from the seed', () => {
      const config = { vocabSize: 12, hiddenSize: 16, numLayers: 2, numHeads: 2, intermediateSize: 24, maxPositions: 8, seed: 5 };
      const tokens = { data: Int32Array.of(1, 4, 7, 2, 9, 11, 3, 0, 5, 5, 8, 2, 6, 10), shape: [2, 7] };
      const inputs = { data: Int32Array.of(1, 4, 7, 2, 9, 11), shape: [1, 6] };
      const [model, twin] = [0, 1].map(() => attn.CausalLM.gpt2({ ...config, dropout: 0.3 }));
      const plain = attn.CausalLM.gpt2(config);
      assert.equal(model.config.dropout, 0.3);
      assert.deepEqual(model.forward(inputs).logits, plain.forward(inputs).logits);
      const first = model.lossAndGradients(tokens).loss;
      assert.equal(twin.lossAndGradients(tokens).loss, first);
      assert.notEqual(first, plain.lossAndGradients(tokens).loss);
      assert.notEqual(model.lossAndGradients(tokens).loss, first);
      assert.throws(() => attn.CausalLM.gpt2({ ...config, dropout: 1 }), { name: 'RangeError', message: /^dropout: / });
      assert.throws(() => attn.CausalLM.gpt2({ ...config, dropout: '0.1' }), { name: 'TypeError', message: /^dropout: / });
      for (const m of [model, twin, plain]) m.dispose();
    });

    test('bad configs, tokens and options name what does not fit; the model keeps working', () => {
      const base = { format: 'llama', positions: 'rotary', norm: 'rms', mlp: 'swiglu', vocabSize: 10, hiddenSize: 8, numLayers: 1, numHeads: 2 };
      assert.throws(() => new attn.CausalLM({ ...base, numKvHeads: 3 }), { name: 'RangeError', message: /^numKvHeads: .*got 3/ });
      assert.throws(() => new attn.CausalLM({ ...base, norm: 'batch' }), { name: 'RangeError', message: /^norm: expected 'layer' \| 'rms', got 'batch'/ });
      assert.throws(() => new attn.CausalLM({ ...base, positions: 'learned' }), { name: 'RangeError', message: /^positions: / });
      assert.throws(() => new attn.CausalLM({ ...base, vocabSize: 0 }), { name: 'RangeError', message: /^vocabSize: / });
      assert.throws(() => new attn.CausalLM({ ...base, bias: 1 }), { name: 'TypeError', message: /^bias: / });
      assert.throws(() => attn.CausalLM.gpt2({ vocabSize: 10, hiddenSize: 8, numLayers: 1, numHeads: 2 }), { name: 'RangeError', message: /^maxPositions: / });
      const m = new attn.CausalLM(base);
      const tokens = { data: Int32Array.of(1, 2, 3), shape: [1, 3] };
      assert.throws(() => m.forward({ data: Int32Array.of(1, 10), shape: [1, 2] }), { name: 'RangeError', message: /^tokens: .*10/ });
      assert.throws(() => m.forward({ data: Float32Array.of(1, 2), shape: [1, 2] }), { name: 'TypeError', message: /^tokens\.data: expected Int32Array/ });
      assert.throws(() => m.lossAndGradients({ data: Int32Array.of(1), shape: [1, 1] }), { name: 'RangeError', message: /^tokens: .*T \+ 1/ });
      assert.throws(() => m.trainStep(tokens, { betas: [0.9, 1] }), { name: 'RangeError', message: /^betas\[1\]: / });
      assert.throws(() => m.trainStep(tokens, { weightDecay: -1 }), { name: 'RangeError', message: /^weightDecay: / });
      assert.throws(() => m.trainStep(tokens, { betas: 0.9 }), { name: 'TypeError', message: /^betas: / });
      assert.equal(m.optimizerSteps, 0);
      assert.ok(Number.isFinite(m.trainStep(tokens, { lr: 1e-2 })));
      assert.equal(m.optimizerSteps, 1);
      m.dispose();
      assert.throws(() => m.forward(tokens), { name: 'TypeError', message: /used after dispose/ });
    });
  });
}
