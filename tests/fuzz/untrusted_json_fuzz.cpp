// The JSON boundary parser (src/base/untrusted_json.h) on any bytes.
//
// Invariants: it never throws; a syntax error leaves the value null; without
// one, the value can always be written back as JSON (bad bytes were replaced)
// and is no deeper than hard_depth; a text it accepts cleanly (ok()) and
// whose numbers are finite re-serializes and re-parses, cleanly, to the same
// value; and on well-formed UTF-8 it agrees with nlohmann's parser wherever
// neither reports a problem.
#include <cmath>
#include <optional>
#include <string>

#include "src/base/untrusted_json.h"
#include "tests/fuzz/fuzz_check.h"

using nlohmann::json;
using toolmux::JsonLimits;
using toolmux::ParsedJson;

namespace {

bool all_finite(const json& value) {
  if (value.is_number_float()) return std::isfinite(value.get<double>());
  if (value.is_structured()) {
    for (const auto& item : value) {
      if (!all_finite(item)) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = toolmux::fuzz::as_text(data, size);
  // Small limits too, so that inputs the fuzzer can reach cross them.
  const JsonLimits small{4, 16};
  for (const JsonLimits& limits : {JsonLimits{}, small}) {
    const ParsedJson parsed = toolmux::parse_untrusted_json(text, limits);
    if (parsed.syntax_error) {
      FUZZ_CHECK(parsed.value.is_null(), "a syntax error leaves the value null");
      FUZZ_CHECK(!parsed.syntax_error->empty(), "a syntax error says what is wrong");
      continue;
    }
    FUZZ_CHECK(toolmux::json_depth(parsed.value) <= limits.hard_depth,
               "no value deeper than hard_depth");
    for (const auto& violation : parsed.violations) {
      FUZZ_CHECK(!violation.message.empty(), "a violation says what is wrong");
    }
    const bool finite = all_finite(parsed.value);
    if (finite) {
      FUZZ_CHECK(!toolmux::unserializable_json(parsed.value),
                 "a parsed value with finite numbers can be written as JSON");
    }
    if (!parsed.ok()) continue;
    FUZZ_CHECK(toolmux::is_valid_utf8(text), "a clean parse means the text was valid UTF-8");
    FUZZ_CHECK(toolmux::json_depth(parsed.value) <= limits.max_depth,
               "a clean parse is no deeper than max_depth");
    if (!finite) continue;
    const std::string written = parsed.value.dump();
    const ParsedJson again = toolmux::parse_untrusted_json(written, limits);
    FUZZ_CHECK(again.ok(), "what a clean parse writes back parses cleanly");
    FUZZ_CHECK(again.value == parsed.value, "a clean value survives writing and reading back");
  }

  // Differential: where nlohmann reads the text too, both read the same value
  // (nlohmann skips a byte order mark; the boundary refuses it, as RFC 8259 lets it).
  // nlohmann also stops at a NUL byte as if the text ended there.
  if (text.substr(0, 3) == "\xEF\xBB\xBF" || text.find('\0') != std::string_view::npos) return 0;
  const ParsedJson parsed = toolmux::parse_untrusted_json(text);
  std::optional<json> reference;
  try {
    reference = json::parse(text);
  } catch (const json::exception&) {
  }
  if (reference && toolmux::json_depth(*reference) <= JsonLimits{}.max_depth) {
    FUZZ_CHECK(!parsed.syntax_error, "text nlohmann reads is no syntax error");
    if (parsed.violations.empty() && all_finite(*reference)) {
      FUZZ_CHECK(parsed.value == *reference, "the same value as nlohmann's parser");
    }
  }
  return 0;
}
