// The HTTP headers of a 2026-07-28 request over Streamable HTTP
// (basic/transports/streamable-http.mdx, "Request Metadata"), taken from the
// JSON-RPC request they go with, so that they always match its body:
// MCP-Protocol-Version (the version in params._meta), Mcp-Method (the
// method) and, for tools/call and prompts/get (params.name) and
// resources/read (params.uri), Mcp-Name. Pure functions.
//
// A tool's x-mcp-header parameters (SEP-2243) need its inputSchema, which the
// transport does not see: declared_param_headers() reads them from the schema
// (McpClient does, when it lists tools) and param_headers() makes the
// Mcp-Param-{Name} headers of one call's arguments, which the client hands to
// ClientTransport::send_with_headers().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/status.h"

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

// One x-mcp-header parameter: the property of the arguments and the header
// name's suffix (Mcp-Param-<name>).
struct ParamHeader {
  std::string property;
  std::string name;
};

// The x-mcp-header parameters `input_schema` declares at its top level
// (none: empty), or an invalid_argument Status naming why a client must not
// call the tool (SEP-2243): a name that is empty or not an HTTP token (no
// spaces, colons, control or non-ASCII characters), one on a property that is
// not of type string, integer or boolean, or two names equal but for case.
Result<std::vector<ParamHeader>> declared_param_headers(const nlohmann::json& input_schema);

// The Mcp-Param-{Name} headers of `arguments`: one for each declared
// parameter that is present and not null; a string's value as header_value()
// writes it, an integer in decimal, a boolean as true or false.
std::vector<std::pair<std::string, std::string>> param_headers(
    const std::vector<ParamHeader>& declared, const nlohmann::json& arguments);

}  // namespace toolmux
