// The HTTP headers of a 2026-07-28 request over Streamable HTTP
// (basic/transports/streamable-http.mdx, "Request Metadata"), taken from the
// JSON-RPC request they go with, so that they always match its body:
// MCP-Protocol-Version (the version in params._meta), Mcp-Method (the
// method) and, for tools/call and prompts/get (params.name) and
// resources/read (params.uri), Mcp-Name. Pure functions.
//
// Not done: Mcp-Param-{Name} headers for a tool's x-mcp-header arguments,
// which need the tool's inputSchema (the transport sees only the message).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace toolmux {

struct ModernHeaders {
  std::string protocol_version;
  std::string method;
  std::optional<std::string> name;  // already a header value (header_value)
};

// The headers of `message` when it is a request that names its protocol
// version in params._meta["io.modelcontextprotocol/protocolVersion"]; nullopt
// for anything else (a legacy request, a notification, a response).
std::optional<ModernHeaders> modern_headers(const nlohmann::json& message);

// `value` as a header carries it ("Value Encoding"): as it is when it is
// visible ASCII and inner spaces or tabs, with no leading or trailing
// whitespace, and does not have the sentinel's shape; otherwise
// "=?base64?<the base64 of its UTF-8 bytes>?=".
std::string header_value(std::string_view value);

}  // namespace toolmux
