#include "src/base/edit_distance.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace toolmux {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::size_t> closest_names(const std::vector<std::string_view>& candidates,
                                       std::string_view name, std::size_t limit,
                                       const Closeness& closeness) {
  std::vector<std::pair<std::size_t, std::size_t>> close;  // (distance, position)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string_view candidate = candidates[i];
    if (closeness.containment_is_closest && !name.empty() &&
        (candidate.find(name) != std::string_view::npos ||
         name.find(candidate) != std::string_view::npos)) {
      close.emplace_back(0, i);
      continue;
    }
    const std::size_t longer = std::max(name.size(), candidate.size());
    const std::size_t allowed = closeness.scale_with_length
                                    ? std::max(closeness.max_edits, longer / 3)
                                    : closeness.max_edits;
    // The difference in length is a lower bound on the distance: skip the
    // comparison when it alone is too far.
    const std::size_t shorter = std::min(name.size(), candidate.size());
    if (longer - shorter > allowed) continue;
    const std::size_t distance = edit_distance(name, candidate);
    if (distance <= allowed) close.emplace_back(distance, i);
  }
  std::stable_sort(close.begin(), close.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < close.size() && i < limit; ++i) positions.push_back(close[i].second);
  return positions;
}

}  // namespace toolmux
