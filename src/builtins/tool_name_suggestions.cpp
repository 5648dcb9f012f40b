#include "src/builtins/tool_name_suggestions.h"

#include <algorithm>
#include <cctype>
#include <tuple>

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
  const std::string g = fold(guess.substr(0, 256));
  std::vector<std::tuple<std::size_t, std::string>> scored;  // (score, name); lower is better
  for (const auto& tool : registry.tools()) {
    const std::string& name = tool->spec.name;
    const std::string n = fold(name);
    std::size_t score;
    if (!g.empty() && (n.find(g) != std::string::npos || g.find(n) != std::string::npos)) {
      score = 0;
    } else {
      const std::size_t distance = edit_distance(g, n);
      const std::size_t allowed = std::max<std::size_t>(2, std::max(g.size(), n.size()) / 3);
      if (distance > allowed) continue;
      score = distance;
    }
    scored.emplace_back(score, name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < scored.size() && i < limit; ++i)
    names.push_back(std::get<1>(scored[i]));
  return names;
}

}  // namespace toolmux
