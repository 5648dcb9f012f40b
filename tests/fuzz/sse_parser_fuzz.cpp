// The SSE parser (transports/sse_parser.h) on any stream bytes.
//
// Invariants: the same bytes fed in one chunk, byte by byte, or in pieces cut
// at places the input picks give the same events, the same outcome (a
// refused stream refuses at the same event) and the same last event id and
// retry; no event is dispatched with empty data or data over the bound.
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_check.h"
#include "transports/sse_parser.h"

namespace {

constexpr std::size_t kMaxEventBytes = 256;

struct Outcome {
  std::vector<toolmux::SseEvent> events;
  bool refused = false;
  std::string last_event_id;
  long long retry_ms = -1;
};

// Feeds `stream` in pieces of the sizes `next_size` gives, stopping when refused.
template <typename NextSize>
Outcome feed(std::string_view stream, NextSize next_size) {
  Outcome outcome;
  toolmux::SseParser parser(kMaxEventBytes);
  const auto on_event = [&](const toolmux::SseEvent& event) {
    FUZZ_CHECK(!event.data.empty(), "no event is dispatched with empty data");
    FUZZ_CHECK(event.data.size() <= kMaxEventBytes, "no event's data is over the bound");
    outcome.events.push_back(event);
    return true;
  };
  while (!stream.empty()) {
    const std::size_t n = std::min(stream.size(), next_size());
    if (!parser.feed(stream.substr(0, n), on_event)) {
      outcome.refused = true;
      break;
    }
    stream.remove_prefix(n);
  }
  outcome.last_event_id = parser.last_event_id();
  if (parser.retry()) outcome.retry_ms = parser.retry()->count();
  return outcome;
}

bool same(const Outcome& a, const Outcome& b) {
  if (a.refused != b.refused || a.events.size() != b.events.size()) return false;
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const auto& x = a.events[i];
    const auto& y = b.events[i];
    if (x.type != y.type || x.data != y.data || x.id != y.id) return false;
  }
  // What a refused stream left behind depends on where the piece ended.
  return a.refused || (a.last_event_id == b.last_event_id && a.retry_ms == b.retry_ms);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first byte picks the piece sizes of the third feeding; the rest is the stream.
  if (size == 0) return 0;
  const unsigned seed = data[0];
  const std::string_view stream = toolmux::fuzz::as_text(data + 1, size - 1);

  const Outcome whole = feed(stream, [] { return std::string_view::npos; });
  const Outcome bytes = feed(stream, [] { return std::size_t{1}; });
  FUZZ_CHECK(same(whole, bytes), "one chunk and byte by byte give the same events");
  unsigned state = seed;
  const Outcome pieces = feed(stream, [&state] {
    state = state * 1103515245u + 12345u;
    return std::size_t{1} + (state >> 16) % 17;
  });
  FUZZ_CHECK(same(whole, pieces), "one chunk and pieces give the same events");
  return 0;
}
