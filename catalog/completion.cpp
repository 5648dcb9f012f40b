#include "catalog/completion.h"

namespace toolmux {

nlohmann::json Completion::to_json() const {
  nlohmann::json out{{"values", nlohmann::json::array()}};
  for (std::size_t i = 0; i < values.size() && i < kMaxValues; ++i)
    out["values"].push_back(values[i]);
  const bool cut = values.size() > kMaxValues;
  if (total) {
    out["total"] = *total;
  } else if (cut) {
    out["total"] = values.size();
  }
  out["hasMore"] = has_more || cut;
  return out;
}

Completion complete_from(const std::vector<std::string>& candidates, std::string_view prefix) {
  Completion out;
  for (const std::string& c : candidates) {
    if (c.compare(0, prefix.size(), prefix) == 0) out.values.push_back(c);
  }
  out.total = out.values.size();
  return out;
}

}  // namespace toolmux
