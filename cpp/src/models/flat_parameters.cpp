#include "flat_parameters.hpp"

#include <algorithm>

#include "state_dict_match.hpp"

namespace attn::detail {

Index element_count(const std::vector<Index>& shape) {
  Index n = 1;
  for (Index d : shape) n *= d;
  return n;
}

Index FlatParameters::add(const std::string& name, std::vector<Index> shape) {
  specs.push_back({name, std::move(shape)});
  offsets.push_back(total);
  total += element_count(specs.back().shape);
  return static_cast<Index>(specs.size()) - 1;
}

std::vector<NamedTensor> FlatParameters::named(const float* base) const {
  std::vector<NamedTensor> out;
  for (size_t id = 0; id < specs.size(); ++id) {
    const float* begin = base + offsets[id];
    out.push_back({specs[id].name, specs[id].shape,
                   std::vector<float>(begin, begin + element_count(specs[id].shape))});
  }
  return out;
}

void FlatParameters::load(const std::vector<NamedTensor>& entries,
                          std::string (*canonical)(const std::string&)) {
  const std::vector<const NamedTensor*> matched = match_state_dict(specs, entries, canonical);
  std::vector<float> loaded(values.size());
  for (size_t id = 0; id < specs.size(); ++id) {
    std::copy(matched[id]->data.begin(), matched[id]->data.end(), loaded.begin() + offsets[id]);
  }
  values = std::move(loaded);  // every entry valid: replace at once
}

}  // namespace attn::detail
