#pragma once
// Loading a state dict all or nothing, as PyTorch's load_state_dict(strict=True) checks it: the
// entries are matched to a model's parameters and every check runs before anything is copied.

#include <string>
#include <vector>

#include "attn/state_dict.hpp"

namespace attn::detail {

// The entry of each parameter of `specs`, in their order. An entry's name goes through
// `canonical` first when given (a model that reads a second spelling of its names). Throws
// std::invalid_argument naming state_dict['name'] for an unknown name, a second entry for one
// parameter, or a shape (or data size) other than the parameter's, and naming state_dict for a
// parameter without an entry.
std::vector<const NamedTensor*> match_state_dict(
    const std::vector<ParameterSpec>& specs, const std::vector<NamedTensor>& entries,
    std::string (*canonical)(const std::string&) = nullptr);

}  // namespace attn::detail
