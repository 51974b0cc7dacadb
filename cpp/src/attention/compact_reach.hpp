#pragma once
// Which keys a compactly supported similarity (boxcar, Epanechnikov) reaches, from float
// products: a query's squared distances to every key come from the GEMM micro-kernels
// (centred_products.hpp), within a known bound E of the exact ones. A key whose float d^2 is
// beyond sigma^2 by more than that bound (and the few ulp of the weight's own rounding) has
// weight 0, as its exact distance would give; for the boxcar, one as far inside has weight 1.
// Only the keys near the edge, and for Epanechnikov those inside, get their distance in double
// as the rows of kernels/regression_rows.hpp compute it (the whole row so, when that is most of
// it), so the weights are the rows' bits while the products run at the micro-kernel's speed and
// most keys of a narrow kernel cost no double arithmetic at all.

#include <vector>

#include "attn/similarity.hpp"
#include "attn/tensor.hpp"
#include "centred_products.hpp"

namespace attn::detail {

class CompactReach {
 public:
  // Keys [n, d], the same feature-major (feature f of key j at keys_t[f * n + j], as
  // f64_squared_distances reads them) and queries [m, d], or none (nullptr): leave-one-out, where
  // the keys are the queries. All three are kept by reference: they must outlive this.
  CompactReach(const MatrixRef& keys, const float* keys_t, const MatrixRef* queries);

  // Whether the products' bound leaves a band at the edge narrow: within a quarter of sigma^2
  // (false for data that are not finite).
  bool narrow_enough(float bandwidth) const;

  // Whether the reach saves time at this bandwidth: a narrow band and, for Epanechnikov, whose
  // keys inside still need their distance in double, at most an eighth of the keys within reach
  // of the first 16 queries (where it reaches more, the products are time added to the rows').
  bool pays(Similarity similarity, float bandwidth) const;

  // squared [rows, n] (row stride n): the squared distances of queries [first, first + rows) to
  // every key as far as `similarity`'s weights need them: exact (in double, as the rows compute
  // them) near the edge and, for Epanechnikov, inside; +infinity beyond the reach; 0 inside the
  // boxcar. `products` [rows * n] is scratch. For leave-one-out, query i's own key is +infinity.
  void squared_distances(Similarity similarity, float bandwidth, Index first, Index rows,
                         float* products, double* squared) const;

 private:
  MatrixRef keys_;
  const float* keys_t_;
  MatrixRef queries_;  // keys_, keys_t_ and queries_ as given: the exact distances
  CentredProducts data_;
  std::vector<float> packed_keys_;              // centred keys as GEMM panels (B = K^T)
  std::vector<float> key_norms_, query_norms_;  // centred squared norms, in float
};

}  // namespace attn::detail
