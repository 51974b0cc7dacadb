#include "attn/mask.hpp"

#include <cmath>
#include <string>

#include "checks.hpp"

namespace attn {

namespace {

void require_mask_batch(const char* argument, Index given, Index matrices, Index nq, Index nk) {
  if (given != 1 && given != matrices) {
    detail::fail(argument,
                 "shape " + detail::shape_string({nq, nk}) + " or " +
                     detail::shape_string({matrices, nq, nk}),
                 "a batch of " + std::to_string(given));
  }
}

}  // namespace

void validate_mask(const Mask& mask, Index batch, Index nq, Index nk, Index batch_heads) {
  const Index matrices = batch * batch_heads;
  if (!mask.valid_lens.empty()) {
    const Index count = static_cast<Index>(mask.valid_lens.size());
    if (count != batch && count != batch * nq) {
      detail::fail(
          "valid_lens",
          "shape " + detail::shape_string({batch}) + " or " + detail::shape_string({batch, nq}),
          detail::shape_string({count}));
    }
    for (Index i = 0; i < count; ++i) {
      const int32_t len = mask.valid_lens[static_cast<size_t>(i)];
      if (len < 0 || len > nk) {
        detail::fail("valid_lens", "values in [0, " + std::to_string(nk) + "]",
                     std::to_string(len) + " at index " + std::to_string(i));
      }
    }
  }
  if (mask.bool_mask) require_mask_batch("bool_mask", mask.bool_mask_batch, matrices, nq, nk);
  if (mask.additive) require_mask_batch("additive", mask.additive_batch, matrices, nq, nk);
  if (std::isnan(mask.fill)) detail::fail("fill", "a number or -Infinity", "NaN");
  if (mask.window_left < -1 || mask.window_right < -1) {
    detail::fail(
        "window", "[left, right] with each side >= -1 (-1: unbounded)",
        "[" + std::to_string(mask.window_left) + ", " + std::to_string(mask.window_right) + "]");
  }
}

}  // namespace attn
