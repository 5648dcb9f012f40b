#include "transports/modern_http_headers.h"

#include "src/base/base64.h"

namespace toolmux {
namespace {

using nlohmann::json;

constexpr std::string_view kSentinelStart = "=?base64?";
constexpr std::string_view kSentinelEnd = "?=";

bool plain(std::string_view value) {
  if (value.empty()) return true;
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (!(byte >= 0x21 && byte <= 0x7E) && byte != ' ' && byte != '\t') return false;
  }
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  if (blank(value.front()) || blank(value.back())) return false;
  // A plain value of the sentinel's shape would be read as encoded.
  const bool sentinel = value.size() >= kSentinelStart.size() + kSentinelEnd.size() &&
                        value.substr(0, kSentinelStart.size()) == kSentinelStart &&
                        value.substr(value.size() - kSentinelEnd.size()) == kSentinelEnd;
  return !sentinel;
}

}  // namespace

std::string header_value(std::string_view value) {
  if (plain(value)) return std::string(value);
  return std::string(kSentinelStart) + base64_encode(value) + std::string(kSentinelEnd);
}

std::optional<ModernHeaders> modern_headers(const json& message) {
  if (!message.is_object()) return std::nullopt;
  auto method = message.find("method");
  auto id = message.find("id");
  auto params = message.find("params");
  if (method == message.end() || !method->is_string() || id == message.end() || id->is_null() ||
      params == message.end() || !params->is_object()) {
    return std::nullopt;
  }
  auto meta = params->find("_meta");
  if (meta == params->end() || !meta->is_object()) return std::nullopt;
  auto version = meta->find("io.modelcontextprotocol/protocolVersion");
  if (version == meta->end() || !version->is_string()) return std::nullopt;
  ModernHeaders headers;
  headers.protocol_version = version->get<std::string>();
  headers.method = method->get<std::string>();
  const char* source = headers.method == "tools/call" || headers.method == "prompts/get" ? "name"
                       : headers.method == "resources/read"                              ? "uri"
                                                                                         : nullptr;
  if (source != nullptr) {
    auto name = params->find(source);
    if (name != params->end() && name->is_string()) {
      headers.name = header_value(name->get<std::string>());
    }
  }
  return headers;
}

}  // namespace toolmux
