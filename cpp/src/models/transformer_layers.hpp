#pragma once
// The Transformer's layers on its flat parameters, each forward beside its backward: the
// embedding with positions, d2l's multi-head attention, AddNorm and the FFN. A backward adds
// its parameters' gradients into `gradients` (laid out like the values) and returns its inputs'.
// Activations are batch-major rows: [B * T, H] is [B, T, H].

#include "attention/multi_head_core.hpp"
#include "attn/dropout.hpp"
#include "attn/layer_norm.hpp"
#include "attn/mask.hpp"
#include "models/dropout_sites.hpp"
#include "models/transformer_parameters.hpp"

namespace attn::detail {

// The sites: encoder block i's k-th (attention, AddNorm1, AddNorm2), the decoder's positional
// encoding, decoder block i's k-th (self-attention, AddNorm1, cross-attention, AddNorm2,
// AddNorm3); the encoder's positional encoding is site 0.
Index encoder_site(Index block, Index k);
Index decoder_base(Index blocks);
Index decoder_site(Index blocks, Index block, Index k);

// Rows [B * T, cols] viewed as [B, T, cols].
ConstBatch batch_of(const Matrix& rows, Index batch);

// The decoder's self-attention mask (the source's is source_mask.hpp's).
Mask causal_mask();

// embedding(ids) * sqrt(H) + the encoding of positions offset .. offset + T - 1, then dropout.
Matrix embed(const Transformer::Parameters& p, const float* values, Index embedding, TokenBatch ids,
             const char* argument, const Matrix& encoding, Index offset,
             const DropoutOptions& dropout);
void embed_backward(const Transformer::Parameters& p, Index embedding, TokenBatch ids,
                    const Matrix& dx, const DropoutOptions& dropout, float* gradients);

// One multi-head attention layer's forward, kept for its backward.
struct AttentionRun {
  HeadProjections heads;
  Matrix merged;  // the heads' outputs, [B * Tq, H]
  Matrix output;  // W_o applied
};

// `weights`, when non-null, receives the heads' weights [B * heads, Tq, Tk] before dropout.
AttentionRun attention_layer(const Matrix& queries, const Matrix& keys_values, Index batch,
                             const MultiHeadWeights& w, const Mask& mask, const Dropout& dropout,
                             Tensor3* weights);

// The gradients of the layer's query input and its key/value input (the same tensor in
// self-attention, whose caller adds them).
struct AttentionInputGradients {
  Matrix d_query, d_keys_values;
};
AttentionInputGradients attention_layer_backward(const AttentionRun& run, const Matrix& queries,
                                                 const Matrix& keys_values,
                                                 const Transformer::Parameters& p,
                                                 const Transformer::Parameters::Attention& ids,
                                                 const float* values, const Mask& mask,
                                                 const Dropout& dropout, const Matrix& d_output,
                                                 float* gradients);

// AddNorm(x, y) and its backward (d x, d y).
Matrix norm(const Transformer::Parameters& p, const float* values,
            const Transformer::Parameters::Norm& ids, const Matrix& x, const Matrix& y,
            const DropoutOptions& dropout);
AddNormGradients norm_backward(const Transformer::Parameters& p, const float* values,
                               const Transformer::Parameters::Norm& ids, const Matrix& x,
                               const Matrix& y, const Matrix& d_output,
                               const DropoutOptions& dropout, float* gradients);

// The FFN's backward (d x), from its input and the forward's relu(dense1(x)).
Matrix ffn_backward(const Transformer::Parameters& p, const float* values,
                    const Transformer::Parameters::FeedForward& ids, const Matrix& x,
                    const Matrix& hidden, const Matrix& d_output, float* gradients);

}  // namespace attn::detail
