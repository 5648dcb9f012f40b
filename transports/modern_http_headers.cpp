#include "transports/modern_http_headers.h"

#include <algorithm>
#include <cctype>

#include "src/base/ascii.h"
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

Result<std::vector<ParamHeader>> declared_param_headers(const json& input_schema) {
  std::vector<ParamHeader> out;
  if (!input_schema.is_object()) return out;
  const auto properties = input_schema.find("properties");
  if (properties == input_schema.end() || !properties->is_object()) return out;
  std::vector<std::string> seen;
  for (const auto& [property, schema] : properties->items()) {
    if (!schema.is_object()) continue;
    const auto annotation = schema.find("x-mcp-header");
    if (annotation == schema.end()) continue;
    const std::string where = "the x-mcp-header of property \"" + property + "\"";
    if (!annotation->is_string() || annotation->get<std::string>().empty()) {
      return Status::invalid_argument(where + " is not a non-empty string");
    }
    const std::string name = annotation->get<std::string>();
    if (!std::all_of(name.begin(), name.end(), is_http_token_char)) {
      return Status::invalid_argument(where + " has a character an HTTP header name cannot have");
    }
    const json type = schema.value("type", json());
    if (type != "string" && type != "integer" && type != "boolean") {
      return Status::invalid_argument(where + " is on a property of type " + type.dump() +
                                      "; only string, integer and boolean may carry one");
    }
    if (std::find(seen.begin(), seen.end(), ascii_lower(name)) != seen.end()) {
      return Status::invalid_argument(where + " repeats the header name \"" + name + "\"");
    }
    seen.push_back(ascii_lower(name));
    out.push_back({property, name});
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> param_headers(
    const std::vector<ParamHeader>& declared, const json& arguments) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!arguments.is_object()) return out;
  for (const ParamHeader& p : declared) {
    const auto value = arguments.find(p.property);
    if (value == arguments.end() || value->is_null()) continue;
    std::string text;
    if (value->is_string()) {
      text = header_value(value->get<std::string>());
    } else if (value->is_boolean()) {
      text = value->get<bool>() ? "true" : "false";
    } else if (value->is_number_integer() || value->is_number_unsigned()) {
      text = value->dump();
    } else {
      continue;  // not what the schema says: the server's validation answers it
    }
    out.emplace_back("Mcp-Param-" + p.name, std::move(text));
  }
  return out;
}

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
  const bool task_method = headers.method == "tasks/get" || headers.method == "tasks/update" ||
                           headers.method == "tasks/cancel";
  const char* source = headers.method == "tools/call" || headers.method == "prompts/get" ? "name"
                       : headers.method == "resources/read"                              ? "uri"
                       : task_method                                                     ? "taskId"
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
