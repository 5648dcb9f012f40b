// The 2026-07-28 protocol (the "modern" era) as the Streamable HTTP transport
// checks it before a request reaches the server: which era a POST is, and
// whether its headers agree with its body (spec: basic/transports/
// streamable-http.mdx, "Request Metadata" and "Server Validation").
//
// A POST is modern when its MCP-Protocol-Version header says 2026-07-28. Its
// Mcp-Method header must be the body's method; its Mcp-Name header the
// body's params.name (tools/call, prompts/get) or params.uri (resources/read),
// Base64-decoded first when sent as "=?base64?...?=". Header values are
// compared as the client sent them (transports/gated_http_server.h,
// header_as_sent): cpp-httplib percent-decodes header values, and a URI's
// "%20" must not turn into a space. A tools/call's Mcp-Param-* headers are
// checked against its arguments by check_param_headers, given the tool's
// x-mcp-header parameters (the transport does not know the tools:
// HttpOptions::param_headers_of asks the server's side).
//
// Pure functions of their arguments; nothing here throws.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/jsonrpc.h"
#include "src/base/jsonrpc_error.h"
#include "transports/modern_http_headers.h"

namespace toolmux::modern_http {

inline constexpr const char* kVersion = "2026-07-28";
inline constexpr const char* kProtocolVersionKey = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";

// Codes the 2026-07-28 spec defines (basic/index.mdx, Error Codes).
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;

// Every version the server speaks, newest first: the list server/discover
// and -32022 give (src/protocol/modern.h, supported_versions()).
nlohmann::json supported_versions();

// The answer to a POST whose MCP-Protocol-Version names a version the server
// does not speak: -32022 with data {supported, requested}.
JsonRpcError unsupported_version(std::string_view requested);

// True when the message's params._meta names a protocol version: the server
// would serve it by the 2026-07-28 rules.
bool body_is_modern(const jsonrpc::Message& m);

// Every value of each header the check reads, as the client sent it (OWS
// trimmed, nothing decoded): none when absent, two or more when repeated.
struct SentHeaders {
  std::vector<std::string> protocol_version;  // MCP-Protocol-Version
  std::vector<std::string> method;            // Mcp-Method
  std::vector<std::string> name;              // Mcp-Name
};

// Whether the request `m` of a modern POST may reach the server: nullopt, or
// the error to answer it with (status 400): -32020 for a standard header
// missing, repeated, holding characters a header may not carry, badly
// Base64-encoded, or not matching the body (naming the header and both
// values); -32602 for a body whose _meta lacks the protocol version or the
// client capabilities (naming the field).
std::optional<JsonRpcError> check_request(const SentHeaders& headers, const jsonrpc::Message& m);

// Whether a tools/call's Mcp-Param-{Name} headers agree with its `arguments`
// (SEP-2243, "Server Validation"), for the tool's `declared` x-mcp-header
// parameters: nullopt, or the -32020 error (status 400) naming the header.
// Each parameter present in `arguments` and not null needs its header, once,
// whose value (Base64-decoded when sent as "=?base64?...?=") is the
// argument's: a string as it is, an integer in decimal, a boolean as true or
// false. A header for a parameter the arguments lack is a mismatch too; so is
// malformed Base64. `sent(header)` gives every value of a header as the
// client sent it (SentHeaders).
std::optional<JsonRpcError> check_param_headers(
    const std::vector<ParamHeader>& declared, const nlohmann::json& arguments,
    const std::function<std::vector<std::string>(const std::string& header)>& sent);

// The value of a header that may carry the Base64 sentinel (Mcp-Name,
// Mcp-Param-*): "=?base64?<b64>?=" decoded (strictly: the standard alphabet,
// padded to a multiple of 4), anything else as it is. nullopt when the
// sentinel holds malformed Base64; `why` then says how.
std::optional<std::string> decode_header_value(std::string_view sent, std::string& why);

// The HTTP status of a modern request's JSON answer whose error code is
// `error_code` (0: a result): 404 for -32601 (method not found), 400 for
// -32020, -32021 and -32022, else 200.
int status_for(int error_code);

}  // namespace toolmux::modern_http
