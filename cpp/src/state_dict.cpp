#include <map>

#include "checks.hpp"
#include "state_dict_match.hpp"

namespace attn::detail {

std::vector<const NamedTensor*> match_state_dict(const std::vector<ParameterSpec>& specs,
                                                 const std::vector<NamedTensor>& entries,
                                                 std::string (*canonical)(const std::string&)) {
  std::map<std::string, size_t> ids;
  for (size_t id = 0; id < specs.size(); ++id) ids[specs[id].name] = id;
  std::vector<const NamedTensor*> matched(specs.size(), nullptr);
  for (const NamedTensor& entry : entries) {
    const std::string name = canonical ? canonical(entry.name) : entry.name;
    const std::string argument = "state_dict['" + entry.name + "']";
    const auto found = ids.find(name);
    if (found == ids.end()) {
      fail(argument, "a parameter of this model (see parameters())", "an unknown name");
    }
    const size_t id = found->second;
    if (matched[id]) fail(argument, "one entry for '" + name + "'", "a second one");
    require_shape(argument, specs[id].shape, entry.shape);
    Index count = 1;
    for (Index size : entry.shape) count *= size;
    if (static_cast<Index>(entry.data.size()) != count) {
      fail(argument, std::to_string(count) + " values for shape " + shape_string(entry.shape),
           std::to_string(entry.data.size()));
    }
    matched[id] = &entry;
  }
  for (size_t id = 0; id < specs.size(); ++id) {
    if (!matched[id]) fail("state_dict", "an entry '" + specs[id].name + "'", "none");
  }
  return matched;
}

}  // namespace attn::detail
