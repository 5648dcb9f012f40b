// Redaction (src/base/redact.h) on any text: tool output and log fields.
// The input is a secret to register, a NUL byte, then the text.
//
// Invariants: redact() and needs_redaction() agree; redacting twice changes
// nothing more; the registered secret (8 bytes or more, and not part of a
// label) is in none of the pieces of the redacted text between labels; what
// is not replaced is kept in order (the text with every label taken out is a
// subsequence of the input); and redact_json() of a JSON array of the text
// gives the array of the redacted text. Secrets with '[' or ']' are not
// registered: one could straddle a label and the text after it.
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/redact.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// Every label redaction writes.
constexpr std::string_view kLabels =
    "[REDACTED][REDACTED:anthropic_key][REDACTED:aws_access_key_id][REDACTED:bearer_token]"
    "[REDACTED:github_token][REDACTED:google_api_key][REDACTED:jwt][REDACTED:openai_key]"
    "[REDACTED:private_key][REDACTED:secret_value][REDACTED:slack_token][REDACTED:stripe_key]"
    "[REDACTED:depth]";

// The pieces of `text` between its "[REDACTED...]" labels.
std::vector<std::string> pieces_between_labels(std::string_view text) {
  std::vector<std::string> pieces(1);
  for (std::size_t i = 0; i < text.size();) {
    if (text.substr(i, 9) == "[REDACTED") {
      const std::size_t close = text.find(']', i);
      if (close != std::string_view::npos) {
        pieces.emplace_back();
        i = close + 1;
        continue;
      }
    }
    pieces.back() += text[i++];
  }
  return pieces;
}

bool is_subsequence(std::string_view small, std::string_view big) {
  std::size_t j = 0;
  for (char c : big) {
    if (j < small.size() && small[j] == c) ++j;
  }
  return j == small.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = toolmux::fuzz::split_input(toolmux::fuzz::as_text(data, size), 2);
  const std::string_view secret = parts[0];
  const std::string_view text = parts[1];
  // Secrets accumulate over the run, as they do over a server's life (the
  // first kMaxSecrets, so that memory stays bounded); a secret holding '[' or
  // ']' could make labels ambiguous, so only others.
  constexpr std::size_t kMaxSecrets = 256;
  static std::set<std::string, std::less<>> secrets;
  const bool may_register = secret.find_first_of("[]") == std::string_view::npos &&
                            (secrets.size() < kMaxSecrets || secrets.count(secret) != 0);
  if (may_register) {
    secrets.emplace(secret);
    toolmux::register_secret(secret);
  }
  const bool registered =
      may_register && secret.size() >= 8 && kLabels.find(secret) == std::string_view::npos;

  const std::string once = toolmux::redact(text);
  FUZZ_CHECK(toolmux::needs_redaction(text) == (once != text), "needs_redaction agrees");
  FUZZ_CHECK(toolmux::redact(once) == once, "redacting twice changes nothing more");
  FUZZ_CHECK(!toolmux::needs_redaction(once), "nothing is left to redact");
  std::string kept;
  for (const std::string& piece : pieces_between_labels(once)) {
    FUZZ_CHECK(!registered || piece.find(secret) == std::string::npos,
               "the registered secret is gone");
    kept += piece;
  }
  FUZZ_CHECK(is_subsequence(kept, text), "what stays is kept in order");
  const nlohmann::json wrapped = nlohmann::json::array({std::string(text)});
  FUZZ_CHECK(toolmux::redact_json(wrapped) == nlohmann::json::array({once}),
             "redact_json redacts strings as redact does");
  return 0;
}
