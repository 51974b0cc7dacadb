#include "dropout_sites.hpp"

#include "models/model_inputs.hpp"

namespace attn::detail {

DropoutOptions DropoutSites::at(Index site) const {
  return {probability_, mix(seed_, static_cast<uint64_t>(site))};
}

}  // namespace attn::detail
