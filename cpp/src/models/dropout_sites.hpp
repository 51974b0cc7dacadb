#pragma once
// The dropout of one pass of a model: site k (each model numbers its sites in forward order, as
// its header says) draws from mix(seed, k); nothing is dropped outside training.

#include "attn/dropout.hpp"
#include "attn/tensor.hpp"
#include "kernels/seeded_dropout.hpp"

namespace attn::detail {

class DropoutSites {
 public:
  DropoutSites(float probability, bool training, uint64_t seed)
      : probability_(training ? probability : 0.0f), seed_(seed) {}
  DropoutOptions at(Index site) const;
  Dropout kernel(Index site) const {
    const DropoutOptions o = at(site);
    return Dropout(o.probability, o.seed);
  }
  bool active() const { return probability_ > 0.0f; }

 private:
  float probability_;
  uint64_t seed_;
};

}  // namespace attn::detail
