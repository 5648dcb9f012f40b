#include "src/protocol/modern.h"

#include <algorithm>
#include <iterator>

namespace toolmux::modern {

using nlohmann::json;

json supported_versions() {
  json versions = json::array({kProtocolVersion});
  for (auto it = std::rbegin(kSupportedProtocolVersions);
       it != std::rend(kSupportedProtocolVersions); ++it) {
    versions.push_back(*it);
  }
  return versions;
}

namespace {

const json* meta_of(const jsonrpc::Message& m) {
  if (!m.params.is_object()) return nullptr;
  auto it = m.params.find("_meta");
  if (it == m.params.end() || !it->is_object()) return nullptr;
  return &*it;
}

bool cacheable(std::string_view method) {
  return method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
         method == "resources/list" || method == "resources/templates/list" ||
         method == "resources/read" || method == "skills/list" || method == "skills/get";
}

}  // namespace

bool is_modern(const jsonrpc::Message& m) {
  const json* meta = meta_of(m);
  return meta && meta->contains(kProtocolVersionKey);
}

std::variant<RequestMeta, JsonRpcError> read_meta(const jsonrpc::Message& m) {
  const json* meta = meta_of(m);
  RequestMeta out;
  const json* version = meta ? &(*meta)[kProtocolVersionKey] : nullptr;
  if (!version || !version->is_string()) {
    return JsonRpcError::invalid_params("_meta[\"" + std::string(kProtocolVersionKey) +
                                        "\"] must be the protocol version (a string)");
  }
  out.protocol_version = version->get<std::string>();
  if (out.protocol_version != kProtocolVersion) {
    return JsonRpcError{kUnsupportedProtocolVersion,
                        "Unsupported protocol version: " + version->dump() +
                            "; this server speaks " + supported_versions().dump(),
                        {{"supported", supported_versions()}, {"requested", *version}}};
  }
  auto capabilities = meta->find(kClientCapabilitiesKey);
  if (capabilities == meta->end() || !capabilities->is_object()) {
    return JsonRpcError::invalid_params("_meta[\"" + std::string(kClientCapabilitiesKey) +
                                        "\"] is required (an object: what the client can do)");
  }
  out.client_capabilities = *capabilities;
  if (auto info = meta->find(kClientInfoKey); info != meta->end()) {
    if (!info->is_object()) {
      return JsonRpcError::invalid_params("_meta[\"" + std::string(kClientInfoKey) +
                                          "\"] must be an object (name, version)");
    }
    out.client_info = *info;
  }
  if (auto level = meta->find(kLogLevelKey); level != meta->end()) {
    std::optional<LogLevel> parsed;
    if (level->is_string()) parsed = log_level_from_name(level->get<std::string>());
    if (!parsed) {
      return JsonRpcError::invalid_params(
          "_meta[\"" + std::string(kLogLevelKey) +
          "\"] must be one of debug, info, notice, warning, error, critical, alert, emergency");
    }
    out.log_level = parsed;
  }
  return out;
}

bool has_method(std::string_view method) {
  static constexpr std::string_view kMethods[] = {"server/discover",
                                                  "tools/list",
                                                  "tools/call",
                                                  "resources/list",
                                                  "resources/templates/list",
                                                  "resources/read",
                                                  "prompts/list",
                                                  "prompts/get",
                                                  "completion/complete",
                                                  "subscriptions/listen",
                                                  "skills/list",
                                                  "skills/get",
                                                  "resources/directory/read",
                                                  "tasks/get",
                                                  "tasks/update",
                                                  "tasks/cancel"};
  return std::find(std::begin(kMethods), std::end(kMethods), method) != std::end(kMethods);
}

json server_info() {
  return {{"name", "toolmux"}, {"title", "toolmux"}, {"version", TOOLMUX_VERSION}};
}

bool ModernSink::needs_shaping(const json& message) {
  auto result = message.find("result");
  auto error = message.find("error");
  const bool shaped_result = result != message.end() && result->is_object();
  const bool old_code = error != message.end() && error->is_object() &&
                        error->value("code", 0) == JsonRpcError::kResourceNotFound;
  return shaped_result || old_code;
}

void ModernSink::shape(json& message) const {
  auto result = message.find("result");
  if (result == message.end() || !result->is_object()) {
    message["error"]["code"] = JsonRpcError::kInvalidParams;  // the old -32002
    return;
  }
  json& r = *result;
  if (!r.contains("resultType")) r["resultType"] = "complete";
  if (!r.contains("_meta") || !r["_meta"].is_object()) r["_meta"] = json::object();
  r["_meta"][kServerInfoKey] = server_info();
  if (r["resultType"] == "complete" && cacheable(method_)) {
    // A resource's contents may change at any time; a list, seldom.
    if (!r.contains("ttlMs")) r["ttlMs"] = method_ == "resources/read" ? 0 : kListTtl.count();
    if (!r.contains("cacheScope")) r["cacheScope"] = cache_scope_;
  }
}

void ModernSink::send(const json& message, const json& related_request) {
  if (!needs_shaping(message)) {
    carrier_->send_related(message, related_request);
    return;
  }
  send_owned(json(message), related_request);
}

void ModernSink::send_owned(json&& message, const json& related_request) {
  if (needs_shaping(message)) shape(message);
  carrier_->send_related(std::move(message), related_request);
}

}  // namespace toolmux::modern
