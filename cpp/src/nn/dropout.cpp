#include "attn/dropout.hpp"

#include "checks.hpp"
#include "kernels/seeded_dropout.hpp"

namespace attn {

Matrix dropout(const MatrixRef& x, const DropoutOptions& options) {
  if (!(options.probability >= 0.0f && options.probability < 1.0f)) {
    detail::fail("dropout", "a probability in [0, 1)", detail::number_string(options.probability));
  }
  Matrix out = x;
  const detail::Dropout mask(options.probability, options.seed);
  if (mask.active()) mask.apply(out.data(), out.size(), 0);
  return out;
}

}  // namespace attn
