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
  // Offloading: a text, image or audio data, or embedded resource over
  // offload_threshold_bytes goes to the result store and the response carries
  // a notice with a result id (and, for text, a preview). Takes precedence
  // over truncation.
  bool offload = true;
  std::uint64_t offload_threshold_bytes = 50000;
  // The most one tools/call result carries, as JSON: every content block and
  // structuredContent. Past it, the blocks that do not fit are stored (or,
  // without offloading, cut or left out).
  std::uint64_t max_response_bytes = 1048576;
  std::chrono::seconds retention{24 * 3600};
  std::uint64_t store_max_bytes = 1ull << 30;
};

}  // namespace toolmux
