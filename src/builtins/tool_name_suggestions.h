// Suggestions for a tool name that is not in the catalog: the registered names
// closest to it, so that a model that guessed wrong can recover.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/tool_registry.h"

namespace toolmux {

// Up to `limit` names, best first: names that contain or are contained in the
// guess, then those within a small edit distance (case-insensitive). Ties are
// broken by name, so the answer is the same every time.
std::vector<std::string> suggest_tool_names(const ToolRegistry& registry, std::string_view guess,
                                            std::size_t limit);

}  // namespace toolmux
