#include "transports/modern_http.h"

#include <algorithm>
#include <iterator>

#include "transports/server_transport.h"

namespace toolmux::modern_http {

using nlohmann::json;

namespace {

constexpr std::string_view kSentinelStart = "=?base64?";
constexpr std::string_view kSentinelEnd = "?=";

// A header value as a JSON string in a message: its bytes need not be UTF-8
// (make_error's dump replaces what is not), and it is quoted, so a value
// with quotes or spaces in it reads unambiguously.
std::string json_text(std::string_view value) {
  return json(std::string(value)).dump(-1, ' ', false, json::error_handler_t::replace);
}

JsonRpcError mismatch(std::string message, std::string_view header, const json& sent,
                      const json& body) {
  return {kHeaderMismatch,
          "Header mismatch: " + std::move(message),
          {{"header", header}, {"headerValue", sent}, {"bodyValue", body}}};
}

// Visible ASCII, space and tab: what RFC 9110 lets a field value hold.
bool header_safe(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b == '\t' || (b >= 0x20 && b <= 0x7E);
  });
}

// The one value of a standard header, or the refusal: missing, repeated, or
// holding characters a header may not carry. `body` is what it must match
// (for the message).
std::optional<JsonRpcError> single(const std::vector<std::string>& values, std::string_view header,
                                   const json& body, std::string_view must_be) {
  if (values.empty()) {
    return mismatch("the " + std::string(header) + " header is missing (it must be " +
                        std::string(must_be) + ", " + body.dump() + ")",
                    header, nullptr, body);
  }
  if (values.size() > 1) {
    return mismatch("the " + std::string(header) + " header is sent " +
                        std::to_string(values.size()) + " times (once, please)",
                    header, values, body);
  }
  if (!header_safe(values.front())) {
    return mismatch("the " + std::string(header) + " header value " + json_text(values.front()) +
                        " holds characters a header may not carry (send it as "
                        "=?base64?...?=)",
                    header, values.front(), body);
  }
  return std::nullopt;
}

int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The _meta field `key` of a modern body, when it is there.
const json* meta_field(const jsonrpc::Message& m, const char* key) {
  if (!m.params.is_object()) return nullptr;
  auto meta = m.params.find("_meta");
  if (meta == m.params.end() || !meta->is_object()) return nullptr;
  auto it = meta->find(key);
  return it == meta->end() ? nullptr : &*it;
}

// Where Mcp-Name comes from for `method`: "name", "uri", or "" (no Mcp-Name).
std::string_view name_source(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  // The tasks extension (SEP-2663): the task's id.
  if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") {
    return "taskId";
  }
  return "";
}

}  // namespace

json supported_versions() {
  json versions = json::array({kVersion});
  for (auto it = std::rbegin(kSupportedProtocolVersions);
       it != std::rend(kSupportedProtocolVersions); ++it) {
    versions.push_back(*it);
  }
  return versions;
}

JsonRpcError unsupported_version(std::string_view requested) {
  return {kUnsupportedProtocolVersion,
          "Unsupported protocol version: MCP-Protocol-Version " + json_text(requested) +
              "; this server speaks " + supported_versions().dump(),
          {{"supported", supported_versions()}, {"requested", std::string(requested)}}};
}

bool body_is_modern(const jsonrpc::Message& m) {
  return meta_field(m, kProtocolVersionKey) != nullptr;
}

std::optional<std::string> decode_header_value(std::string_view sent, std::string& why) {
  if (sent.size() < kSentinelStart.size() + kSentinelEnd.size() ||
      sent.substr(0, kSentinelStart.size()) != kSentinelStart ||
      sent.substr(sent.size() - kSentinelEnd.size()) != kSentinelEnd) {
    return std::string(sent);  // no sentinel: the value as it is
  }
  const std::string_view b64 =
      sent.substr(kSentinelStart.size(), sent.size() - kSentinelStart.size() - kSentinelEnd.size());
  if (b64.size() % 4 != 0) {
    why = "its Base64 is " + std::to_string(b64.size()) +
          " characters long, not padded to a multiple of 4";
    return std::nullopt;
  }
  std::string out;
  out.reserve(b64.size() / 4 * 3);
  for (std::size_t i = 0; i < b64.size(); i += 4) {
    // Only the last group may end in padding: "x===" is not Base64 either.
    int pad = 0;
    if (i + 4 == b64.size() && b64[i + 3] == '=') pad = b64[i + 2] == '=' ? 2 : 1;
    unsigned bits = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int digit = k < 4 - static_cast<std::size_t>(pad) ? base64_digit(b64[i + k]) : 0;
      if (digit < 0) {
        why = "its Base64 holds " + json_text(b64.substr(i + k, 1)) + " at " +
              std::to_string(i + k) + ", which is not in the Base64 alphabet there";
        return std::nullopt;
      }
      bits = (bits << 6) | static_cast<unsigned>(digit);
    }
    out += static_cast<char>((bits >> 16) & 0xFF);
    if (pad < 2) out += static_cast<char>((bits >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(bits & 0xFF);
  }
  return out;
}

std::optional<JsonRpcError> check_request(const SentHeaders& headers, const jsonrpc::Message& m) {
  const json method = m.method;
  if (auto refused = single(headers.method, "Mcp-Method", method, "the body's method")) {
    return refused;
  }
  if (headers.method.front() != m.method) {
    return mismatch("Mcp-Method header value " + json_text(headers.method.front()) +
                        " does not match body value " + method.dump(),
                    "Mcp-Method", headers.method.front(), method);
  }
  if (!m.params.is_object() || !m.params.contains("_meta") || !m.params["_meta"].is_object()) {
    return JsonRpcError::invalid_params(
        "a 2026-07-28 request needs params._meta (an object) with \"" +
        std::string(kProtocolVersionKey) + "\" and \"" + kClientCapabilitiesKey + "\"");
  }
  const json* version = meta_field(m, kProtocolVersionKey);
  if (!version || !version->is_string()) {
    return JsonRpcError::invalid_params("_meta[\"" + std::string(kProtocolVersionKey) +
                                        "\"] must be the protocol version (a string)");
  }
  // The header said 2026-07-28 (else the POST would not be modern).
  if (auto refused = single(headers.protocol_version, "MCP-Protocol-Version", *version,
                            "the body's _meta protocol version")) {
    return refused;
  }
  if (headers.protocol_version.front() != version->get_ref<const std::string&>()) {
    return mismatch(
        "MCP-Protocol-Version header value " + json_text(headers.protocol_version.front()) +
            " does not match body value _meta[\"" + kProtocolVersionKey + "\"] " + version->dump(),
        "MCP-Protocol-Version", headers.protocol_version.front(), *version);
  }
  const json* capabilities = meta_field(m, kClientCapabilitiesKey);
  if (!capabilities || !capabilities->is_object()) {
    return JsonRpcError::invalid_params("_meta[\"" + std::string(kClientCapabilitiesKey) +
                                        "\"] is required (an object: what the client can do)");
  }
  const std::string_view source = name_source(m.method);
  if (source.empty()) return std::nullopt;
  const auto field = m.params.find(source);
  const json body = field == m.params.end() ? json() : *field;
  if (!body.is_string()) {
    // The server answers a missing or malformed name (-32602); a header
    // naming something the body does not is a mismatch all the same.
    if (headers.name.empty()) return std::nullopt;
    return mismatch("Mcp-Name header value " + json_text(headers.name.front()) +
                        " does not match body value params." + std::string(source) + " " +
                        body.dump(),
                    "Mcp-Name", headers.name.front(), body);
  }
  const std::string must_be = "the body's params." + std::string(source);
  if (auto refused = single(headers.name, "Mcp-Name", body, must_be)) return refused;
  std::string why;
  const auto decoded = decode_header_value(headers.name.front(), why);
  if (!decoded) {
    return mismatch(
        "the Mcp-Name header value " + json_text(headers.name.front()) + " is not valid: " + why,
        "Mcp-Name", headers.name.front(), body);
  }
  if (*decoded != body.get_ref<const std::string&>()) {
    return mismatch(
        "Mcp-Name header value " + json_text(headers.name.front()) +
            (*decoded != headers.name.front() ? " (decoded: " + json_text(*decoded) + ")"
                                              : std::string()) +
            " does not match body value params." + std::string(source) + " " + body.dump(),
        "Mcp-Name", headers.name.front(), body);
  }
  return std::nullopt;
}

std::optional<JsonRpcError> check_param_headers(
    const std::vector<ParamHeader>& declared, const json& arguments,
    const std::function<std::vector<std::string>(const std::string& header)>& sent) {
  for (const ParamHeader& p : declared) {
    const std::string name = "Mcp-Param-" + p.name;
    const std::string_view header = name;  // (a std::string would bring std::mismatch in)
    const std::vector<std::string> values = sent(name);
    const auto field = arguments.is_object() ? arguments.find(p.property) : arguments.end();
    const bool present = arguments.is_object() && field != arguments.end() && !field->is_null();
    if (!present) {
      if (values.empty()) continue;
      return mismatch(
          "the " + name + " header is sent, but the arguments have no " + json_text(p.property),
          header, values.front(), nullptr);
    }
    const json& body = *field;
    const std::string must_be = "the arguments' " + json_text(p.property);
    if (auto refused = single(values, header, body, must_be)) return refused;
    std::string why;
    const auto decoded = decode_header_value(values.front(), why);
    if (!decoded) {
      return mismatch(
          "the " + name + " header value " + json_text(values.front()) + " is not valid: " + why,
          header, values.front(), body);
    }
    const std::string expected = body.is_string() ? body.get<std::string>() : body.dump();
    if (*decoded != expected) {
      return mismatch(name + " header value " + json_text(values.front()) +
                          (*decoded != values.front() ? " (decoded: " + json_text(*decoded) + ")"
                                                      : std::string()) +
                          " does not match body value arguments." + p.property + " " + body.dump(),
                      header, values.front(), body);
    }
  }
  return std::nullopt;
}

int status_for(int error_code) {
  if (error_code == jsonrpc::kMethodNotFound) return 404;
  if (error_code == kHeaderMismatch || error_code == kMissingRequiredClientCapability ||
      error_code == kUnsupportedProtocolVersion) {
    return 400;
  }
  return 200;
}

}  // namespace toolmux::modern_http
