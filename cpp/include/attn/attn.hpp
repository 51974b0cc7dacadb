#pragma once
// The whole core in one include.

#include "attn/attention.hpp"
#include "attn/bmm.hpp"
#include "attn/cross_entropy.hpp"
#include "attn/embedding.hpp"
#include "attn/gru.hpp"
#include "attn/kernel_regression.hpp"
#include "attn/kernels.hpp"
#include "attn/linear.hpp"
#include "attn/mask.hpp"
#include "attn/multi_head_attention.hpp"
#include "attn/optim.hpp"
#include "attn/positional_encoding.hpp"
#include "attn/scoring.hpp"
#include "attn/seq2seq.hpp"
#include "attn/softmax.hpp"
#include "attn/tensor.hpp"
