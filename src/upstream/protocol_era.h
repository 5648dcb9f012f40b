// Which era of MCP an upstream speaks, as toolmux (its client) finds out and
// then speaks it: the 2026-07-28 protocol ("modern": every request carries its
// version, client capabilities and client info in _meta; no handshake), or a
// version with the initialize handshake ("legacy", 2025-11-25 and earlier).
// See the spec's basic/versioning.mdx, "Backward Compatibility".
//
// The probe is server/discover with the modern _meta. judge_probe reads its
// answer: a DiscoverResult naming 2026-07-28 is a modern upstream; a recognized
// modern error (-32022 UnsupportedProtocolVersion, -32021, -32020) is a modern
// upstream that refuses us, unless the versions it names include a legacy one
// toolmux speaks (then initialize); any other error, or no answer, is a legacy
// upstream (the spec forbids keying the fallback to one code). Pure functions.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace toolmux {

enum class ProtocolEra { legacy, modern };

inline constexpr const char* kModernProtocolVersion = "2026-07-28";
// What toolmux asks for at initialize; it accepts the version the server
// answers with when it is one of kLegacyProtocolVersions.
inline constexpr const char* kLegacyProtocolVersion = "2025-11-25";
inline constexpr std::array<std::string_view, 4> kLegacyProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// The reserved _meta keys of a modern request (basic/index.mdx, "_meta").
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
// The tasks extension (src/pipeline/tasks.h), which toolmux declares to every
// upstream: it follows an upstream's task to its end (McpClient::call_tool).
inline constexpr const char* kTasksExtensionName = "io.modelcontextprotocol/tasks";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";

// The modern error codes (basic/index.mdx, "Error Codes").
inline constexpr int kHeaderMismatchCode = -32020;
inline constexpr int kMissingRequiredClientCapabilityCode = -32021;
inline constexpr int kUnsupportedProtocolVersionCode = -32022;

// The client capabilities toolmux can answer for an upstream: what it relays
// to its own clients through CallContext::ask_client.
inline constexpr std::array<std::string_view, 3> kRelayedCapabilities = {"elicitation", "sampling",
                                                                         "roots"};

// What toolmux declares to a modern upstream for a request made for a client
// that declared `client_capabilities`: those of kRelayedCapabilities the
// client declared, as it declared them (so the upstream asks only what the
// client can answer). For a request made for no client (the probe, listing
// tools at start): every relayed capability, empty.
nlohmann::json relayed_capabilities(const nlohmann::json& client_capabilities);
nlohmann::json relayed_capabilities();

// The capability an input request's method needs ("elicitation/create" ->
// "elicitation", "sampling/createMessage" -> "sampling", "roots/list" ->
// "roots"); "" for any other method.
std::string_view capability_for(std::string_view method);

// Puts the modern _meta into `params` (an object, or null for none): the
// protocol version, `capabilities`, toolmux's client info, and the log level
// "debug" when `log_debug` (toolmux filters log messages at each of its
// clients' own levels). Keys already in params._meta (progressToken) stay.
void add_modern_meta(nlohmann::json& params, const nlohmann::json& capabilities, bool log_debug);

// What the probe's answer says.
struct ProbeVerdict {
  enum class Kind {
    modern,   // speak 2026-07-28 to it
    legacy,   // fall back to initialize
    refused,  // a modern upstream toolmux cannot speak to: `reason` says why
  };
  Kind kind = Kind::legacy;
  // Why, for the log (legacy) or the error (refused), naming the upstream
  // where it is part of an error.
  std::string reason;
};

// The verdict on server/discover's answer: `result` (a result object, or
// null when there was none), else `error` (the JSON-RPC error object; null
// when no answer came, e.g. the probe timed out, with `no_answer` saying why).
ProbeVerdict judge_probe(const std::string& upstream, const nlohmann::json& result,
                         const nlohmann::json& error, const std::string& no_answer);

// Whether `error` (a JSON-RPC error object) is -32022 naming kModernProtocolVersion
// among the versions it supports: the answer a modern-only server gives to
// initialize, when a slow start made the probe give up on it.
bool supports_modern(const nlohmann::json& error);

}  // namespace toolmux
