#include "src/builtins/tool_name_suggestions.h"

#include <algorithm>
#include <cctype>

#include "src/base/edit_distance.h"

namespace toolmux {
namespace {

std::string fold(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '-' || c == '.') c = '_';
  }
  return out;
}

}  // namespace

std::vector<std::string> suggest_tool_names(const ToolRegistry& registry, std::string_view guess,
                                            std::size_t limit) {
  // Candidates in name order, so that equally close names come by name.
  std::vector<std::string> names;
  names.reserve(registry.tools().size());
  for (const auto& tool : registry.tools()) names.push_back(tool->spec.name);
  std::sort(names.begin(), names.end());
  std::vector<std::string> folded;
  folded.reserve(names.size());
  for (const std::string& name : names) folded.push_back(fold(name));
  const std::vector<std::string_view> candidates(folded.begin(), folded.end());
  // A guess comes from a caller: its length is bounded before the comparisons.
  const std::vector<std::size_t> best = closest_names(
      candidates, fold(guess.substr(0, 256)), limit,
      Closeness{.max_edits = 2, .scale_with_length = true, .containment_is_closest = true});
  std::vector<std::string> suggestions;
  suggestions.reserve(best.size());
  for (std::size_t i : best) suggestions.push_back(names[i]);
  return suggestions;
}

}  // namespace toolmux
