// The search memory's saved form (catalog/search_memory.h), as read back from
// the data directory, on any bytes. Most inputs fail the checksum; the
// fuzzer gets past it through the seeds, whose checksum it cannot keep, so
// half of the inputs are given a good checksum first (the input's last 8
// bytes replaced by the FNV-1a of the rest, as to_bytes writes it).
//
// Invariants: from_bytes answers (an error leaves the memory empty, as it
// was); what it accepts holds at most max_terms terms of at most max_tools
// tools, and saved again reads back to the same bytes.
#include <chrono>
#include <cstdint>
#include <string>

#include "catalog/search_memory.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

toolmux::SearchMemoryOptions small_options() {
  toolmux::SearchMemoryOptions options;
  options.max_terms = 64;
  options.max_tools = 3;
  // A fixed clock: saving and reading back do not decay the counts.
  options.now = [] { return std::chrono::system_clock::time_point(std::chrono::hours(500000)); };
  return options;
}

std::string with_good_checksum(std::string bytes) {
  if (bytes.size() < 8) return bytes;
  bytes.resize(bytes.size() - 8);
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((h >> (8 * i)) & 0xFFU));
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string input(toolmux::fuzz::as_text(data, size));
  if (size % 2 == 0) input = with_good_checksum(std::move(input));
  const toolmux::SearchMemoryOptions options = small_options();
  toolmux::SearchMemory memory(options);
  const toolmux::Status status = memory.from_bytes(input);
  if (!status.ok()) {
    FUZZ_CHECK(!status.message().empty(), "an error says what is wrong");
    FUZZ_CHECK(memory.term_count() == 0 && memory.changes() == 0, "an error changes nothing");
    return 0;
  }
  FUZZ_CHECK(memory.term_count() <= options.max_terms, "at most max_terms terms");
  FUZZ_CHECK(memory.association_count() <= memory.term_count() * options.max_tools,
             "at most max_tools tools a term");
  const std::string saved = memory.to_bytes();
  toolmux::SearchMemory again(options);
  FUZZ_CHECK(again.from_bytes(saved).ok(), "what was saved reads back");
  FUZZ_CHECK(again.to_bytes() == saved, "and saves to the same bytes");
  return 0;
}
