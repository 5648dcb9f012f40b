// The client's model's answer to tool_search's re-ranking question
// (catalog/search_rerank.h): untrusted text from a model. The input's first
// byte picks how many candidates there were (1 to 20); the rest is the
// answer's text, read as one text block and as an array of two blocks cut at
// its middle, and is also given to rerank_line as a description.
//
// Invariants: an answer that is not ok chose nothing and says why; the
// chosen candidates are in range and each at most once; rerank_order of them
// is a permutation of the candidates that starts with them; and rerank_line
// of valid UTF-8 is valid UTF-8 of at most kRerankLineChars characters, with
// no control character or new line.
#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/search_rerank.h"
#include "src/base/utf8.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using nlohmann::json;

json text_block(std::string_view text) {
  return {{"type", "text"}, {"text", toolmux::lossy_utf8(text)}};
}

void check_answer(const json& result, std::size_t count) {
  const toolmux::RerankAnswer answer = toolmux::read_rerank_answer(result, count);
  if (!answer.ok) {
    FUZZ_CHECK(answer.chosen.empty(), "an answer without an order chose nothing");
    FUZZ_CHECK(!answer.problem.empty(), "an answer without an order says why");
    return;
  }
  std::vector<bool> seen(count, false);
  for (std::size_t i : answer.chosen) {
    FUZZ_CHECK(i < count, "a chosen candidate is in range");
    FUZZ_CHECK(!seen[i], "a candidate is chosen at most once");
    seen[i] = true;
  }
  const std::vector<std::size_t> order = toolmux::rerank_order(answer.chosen, count);
  FUZZ_CHECK(order.size() == count, "the order holds every candidate");
  FUZZ_CHECK(std::equal(answer.chosen.begin(), answer.chosen.end(), order.begin()),
             "the order starts with the chosen candidates");
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < count; ++i) FUZZ_CHECK(sorted[i] == i, "the order is a permutation");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t count = 1 + data[0] % toolmux::kRerankMaxCandidates;
  const std::string_view text = toolmux::fuzz::as_text(data + 1, size - 1);
  check_answer({{"role", "assistant"}, {"content", text_block(text)}}, count);
  const std::size_t half = text.size() / 2;
  check_answer(
      {{"content", json::array({text_block(text.substr(0, half)), text_block(text.substr(half))})}},
      count);
  const std::string valid = toolmux::lossy_utf8(text);
  const std::string line = toolmux::rerank_line(valid);
  FUZZ_CHECK(toolmux::is_valid_utf8(line), "a line of valid UTF-8 is valid UTF-8");
  FUZZ_CHECK(toolmux::utf8_length(line) <= toolmux::kRerankLineChars, "a line is cut");
  FUZZ_CHECK(std::none_of(line.begin(), line.end(),
                          [](char c) { return static_cast<unsigned char>(c) < 0x20; }),
             "a line has no control character");
  return 0;
}
