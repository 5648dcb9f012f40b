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
// bytes are ignored (redacting them would mangle ordinary text), and so are
// values that are part of a label redaction writes (such as "REDACTED").
// Cheap to call again with a value already known.
void register_secret(std::string_view secret);

// `text` with every known secret and credential shape replaced. Linear in
// the text (a scan repeated at most 4 times, only when it found something);
// redacting the result again changes nothing more (for secrets without '['
// or ']').
std::string redact(std::string_view text);
// Whether redact(text) would change anything (one scan, no copy): the fast
// path for text that is usually clean, such as log fields.
bool needs_redaction(std::string_view text);

// A copy of `value` with every string redacted, and the value of every member
// whose key names a secret replaced by "[REDACTED]" whatever its type. A key
// names a secret when, ignoring case, '_', '-' and '.', it ends with
// password, passwd, passphrase, secret, apikey, privatekey or secretkey, or is
// authorization, proxyauthorization, cookie, setcookie, token, accesstoken,
// refreshtoken, idtoken, authtoken, sessiontoken, bearertoken, apitoken,
// securitytoken, secretaccesskey or credentials ("nextPageToken" and
// "max_tokens" are data). Bounded: what lies deeper than 64 levels is
// replaced by "[REDACTED:depth]".
nlohmann::json redact_json(const nlohmann::json& value);

}  // namespace toolmux
