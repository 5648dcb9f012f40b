// Redaction: secrets toolmux knows and common credential shapes never leave
// it, in results, log lines, audit records or confirmation prompts.
//
// Known secrets are registered where toolmux reads them (the tokens file,
// upstreams' fromEnv/fromFile values, bearer tokens); each occurrence of one
// is replaced by "[REDACTED]". Credential shapes (README, "Redaction") are
// found by a bounded scan, never a backtracking regex, and replaced by
// "[REDACTED:<shape>]", e.g. "[REDACTED:github_token]".
//
// Thread-safe: secrets may be registered while other threads redact.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace toolmux {

// Remembers `secret` for the life of the process. Values shorter than 8
// bytes are ignored (redacting them would mangle ordinary text).
void register_secret(std::string_view secret);

// `text` with every known secret and credential shape replaced.
std::string redact(std::string_view text);
// Whether redact(text) would change anything (cheaper: no copy).
bool needs_redaction(std::string_view text);

// A copy of `value` with every string redacted, and the value of every member
// whose key names a secret ("password", "token", "secret", "api_key",
// "authorization", ... case-insensitively) replaced by "[REDACTED]" whatever
// its type. Bounded: deeper than 64 levels is replaced by "[REDACTED:depth]".
nlohmann::json redact_json(const nlohmann::json& value);

}  // namespace toolmux
