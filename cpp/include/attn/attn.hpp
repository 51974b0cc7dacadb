#pragma once
// The whole core in one include.

#include "attn/attention.hpp"
#include "attn/bmm.hpp"
#include "attn/kernel_regression.hpp"
#include "attn/kernels.hpp"
#include "attn/kv_cache.hpp"
#include "attn/linear.hpp"
#include "attn/mask.hpp"
#include "attn/multi_head_attention.hpp"
#include "attn/positional_encoding.hpp"
#include "attn/scoring.hpp"
#include "attn/softmax.hpp"
#include "attn/tensor.hpp"
