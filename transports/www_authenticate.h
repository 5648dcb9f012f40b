// The WWW-Authenticate header of a 401 or 403 (RFC 9110 §11.6.1): the
// challenges a protected MCP server sends to say how to authorize (MCP
// basic/authorization.mdx, "Protected Resource Metadata Discovery" and
// "Scope Challenge Handling"; RFC 6750 §3 for the Bearer parameters).
//
// parse_www_authenticate() is a pure function over untrusted text: it never
// throws and never reads past the text; a header over kMaxHeaderBytes, with
// more than kMaxChallenges challenges or kMaxParams parameters in one, or that
// breaks the grammar is refused with a sentence naming what is wrong. A
// parameter named twice in one challenge keeps its first value (RFC 9110:
// each name MUST occur once). Scheme and parameter names compare without
// case; values keep theirs.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace toolmux {

struct AuthChallenge {
  std::string scheme;  // as sent ("Bearer")
  // Parameter names in lowercase, values unquoted and unescaped.
  std::map<std::string, std::string> params;
  std::string token68;  // the token68 form, when the challenge has one instead

  // A parameter's value, nullopt when absent; `name` in lowercase.
  std::optional<std::string> param(std::string_view name) const;
};

inline constexpr std::size_t kMaxWwwAuthenticateBytes = 8192;
inline constexpr std::size_t kMaxChallenges = 16;
inline constexpr std::size_t kMaxChallengeParams = 32;

Result<std::vector<AuthChallenge>> parse_www_authenticate(std::string_view header);

// The first Bearer challenge of `header`, or nullopt (none, or the header
// cannot be read).
std::optional<AuthChallenge> bearer_challenge(std::string_view header);

}  // namespace toolmux
