// What the catalog file's "upstreams" section declares: MCP servers toolmux
// starts as child processes and is the client of, and how their tools join
// the catalog (prefix, include/exclude, per-tool overrides).
//
// upstream_tool_spec turns one tool an upstream listed into the ToolSpec
// toolmux registers for it. Pure functions on plain data; the spec it returns
// may still break the contract (ToolRegistry::add is where that is checked).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"

namespace toolmux {

// An upstream tool's timeout when the catalog file gives none.
inline constexpr std::chrono::milliseconds kUpstreamDefaultTimeout{60000};

// "tools": {"<upstream tool name>": {...}}: what the operator changes in one
// upstream tool. Absent fields keep what the upstream says.
struct UpstreamToolOverride {
  std::optional<std::string> name;  // the whole published name (no prefix added)
  std::optional<std::string> description;
  std::optional<std::string> side_effect;
  std::optional<std::chrono::milliseconds> timeout;
  bool pinned = false;  // always listed when discovery is on
  // "spotlight": wrap its results as untrusted data; nullopt = the upstream's.
  std::optional<bool> spotlight;
  // "redactPersonalData": the classes of personal data hidden in its results,
  // in place of the upstream's ([] turns them off); nullopt = the upstream's.
  std::optional<PersonalDataClasses> redact_personal_data;
};

// How toolmux keeps an upstream serving (src/upstream/upstream.h).
struct UpstreamLifecycle {
  bool lazy = false;  // "start": "lazy": started by the first call to one of its tools
  std::chrono::milliseconds start_timeout{30000};  // for initialize, and again for tools/list
  // How long the era probe (server/discover) waits before taking the upstream
  // for a legacy one (src/upstream/protocol_era.h).
  std::chrono::milliseconds probe_timeout{5000};
  // After a crash or a failed start, the next attempt waits initial, then
  // twice as long each time up to max; back to initial once it served 30 s.
  std::chrono::milliseconds restart_initial{500};
  std::chrono::milliseconds restart_max{30000};
  // The circuit breaker, on only when the catalog gives the upstream a
  // "circuitBreaker" section: opens after `failures` calls in a row failed (no
  // answer, timed out, lost), refuses calls for `cooldown`, then lets one
  // probe call through. It guards reads only: a call of a tool that is not
  // read_only is never refused by it nor counted toward it (refusing a write
  // the upstream may have been about to take, or blaming it for one, is not
  // the breaker's call).
  bool breaker = false;
  int breaker_failures = 5;
  std::chrono::milliseconds breaker_cooldown{30000};
  // Extra attempts a read_only call may make when the upstream was lost
  // under it (nothing else is ever retried).
  int read_only_retries = 1;
};

// "oauth": how toolmux gets a token for an HTTP upstream that asks for
// authorization (MCP authorization; transports/oauth_client.h does it):
// - client_credentials, which needs no person (the
//   io.modelcontextprotocol/oauth-client-credentials extension): a client_id
//   and a client secret or a private key (private_key_jwt);
// - authorization_code, for an upstream a person logs in to once with
//   `toolmux login NAME` (PKCE, a redirect to a loopback port): a
//   pre-registered client_id (and maybe a secret), else one registered at
//   login; the login is kept in the store (src/store/upstream_logins.h).
// Secrets resolved, never logged.
struct UpstreamOAuth {
  enum class Grant { client_credentials, authorization_code };
  Grant grant = Grant::client_credentials;
  std::string client_id;  // authorization_code: "" = registered at login
  std::string client_secret;
  std::string private_key_pem;
  std::string signing_algorithm = "ES256";
  std::string token_endpoint_auth_method;  // "" = chosen from what the server supports
  std::string issuer;                      // "" = whichever the server names
  std::string scope;                       // "" = as the server says
  int redirect_port = 0;  // authorization_code: the login's loopback port; 0 = any free one

  friend bool operator==(const UpstreamOAuth&, const UpstreamOAuth&) = default;
};

struct UpstreamSpec {
  std::string name;  // the key in "upstreams"
  // Either a child process over stdio ("command") or a Streamable HTTP
  // endpoint ("url"), never both.
  std::string url;
  // Sent with every HTTP request, secrets resolved ("bearerToken" becomes
  // Authorization). Never logged.
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<UpstreamOAuth> oauth;  // "oauth": tokens from its authorization server
  std::vector<std::string> argv;       // "command" then "args"
  std::filesystem::path cwd;           // empty = toolmux's working directory
  // The child's whole environment: the inherited basics (PATH, HOME, ...)
  // then "env" with its references resolved, as "NAME=value" entries.
  std::vector<std::string> env;
  std::string prefix;  // put before each tool's name; default "<name>_"
  std::optional<std::vector<std::string>> include;  // nullopt = every tool
  std::vector<std::string> exclude;
  std::map<std::string, UpstreamToolOverride, std::less<>> tools;
  UpstreamLifecycle lifecycle;
  // "spotlight": wrap the results of all its tools as untrusted data (a
  // tool's override wins); nullopt = each tool by its openWorldHint.
  std::optional<bool> spotlight;
  // "redactPersonalData": the classes of personal data hidden in the results
  // of all its tools (a tool's override replaces them); none by default.
  PersonalDataClasses redact_personal_data;
  // "description": what the operator says the server is for; tool_search
  // ranks and names sources by it, beside the server's own description and
  // instructions.
  std::string description;
};

// True when the two reach the same server the same way (a reload keeps the
// running upstream then; the rest of a spec applies without a restart).
bool same_connection(const UpstreamSpec& a, const UpstreamSpec& b);

// True when `tool` may be the name of an upstream tool once the upstreams are
// listed: it starts with an upstream's prefix, is the name an override gives,
// or some upstream has no prefix. Such names in aliases, policy and pins are
// checked when serve has listed the upstreams, not when the file is loaded.
bool may_be_upstream_tool(const std::vector<UpstreamSpec>& upstreams, std::string_view tool);

// readOnlyHint true -> read_only; else destructiveHint false -> remote_mutation,
// or local_mutation when it also says openWorldHint false (it acts only on its
// own server's state); else destructive: MCP's default for a missing
// destructiveHint is true (and for openWorldHint, true), and a hint that is
// not a boolean counts as missing.
SideEffect side_effect_from_annotations(const nlohmann::json& annotations);

// The spec for `tool` (one entry of the upstream's tools/list result), with
// the prefix and the operator's overrides applied; nullopt when include or
// exclude leave the tool out. It keeps the upstream's openWorldHint (absent
// or not a boolean: true, MCP's default) unless an override gives its class
// (then the class decides, as for any tool), and its results are spotlighted
// (untrusted_output) as the tool's override, else the upstream's "spotlight",
// else its published openWorldHint says. Its personal data classes are the
// override's, else the upstream's. The handler is the caller's to attach.
std::optional<ToolSpec> upstream_tool_spec(const UpstreamSpec& upstream,
                                           const nlohmann::json& tool);

}  // namespace toolmux
