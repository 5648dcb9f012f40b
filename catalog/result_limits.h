// Limits on what a tool result may put in a response, from the catalog file's
// "results" section. Plain data; the call pipeline enforces it.
#pragma once

#include <chrono>
#include <cstdint>

namespace toolmux {

struct ResultLimits {
  // Text longer than this many Unicode characters is cut, with a marker;
  // -1 turns truncation off.
  std::int64_t max_text_chars = 100000;
  // Offloading: text over offload_threshold_bytes goes to the result store and
  // the response carries a preview and a result id. Takes precedence over
  // truncation.
  bool offload = true;
  std::uint64_t offload_threshold_bytes = 50000;
  std::chrono::seconds retention{24 * 3600};
  std::uint64_t store_max_bytes = 1ull << 30;
};

}  // namespace toolmux
