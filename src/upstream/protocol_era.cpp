#include "src/upstream/protocol_era.h"

#include <algorithm>
#include <vector>

namespace toolmux {
namespace {

using nlohmann::json;

bool is_legacy_version(const json& version) {
  return version.is_string() &&
         std::find(kLegacyProtocolVersions.begin(), kLegacyProtocolVersions.end(),
                   version.get<std::string>()) != kLegacyProtocolVersions.end();
}

// The strings of `versions` (an array, or anything else for none).
std::vector<json> versions_of(const json& versions) {
  std::vector<json> out;
  if (!versions.is_array()) return out;
  for (const json& v : versions) {
    if (v.is_string()) out.push_back(v);
  }
  return out;
}

// "2027-01-01, 2027-06-01", or "none" for an empty list.
std::string listed(const std::vector<json>& versions) {
  std::string text;
  for (const json& v : versions) text += (text.empty() ? "" : ", ") + v.get<std::string>();
  return text.empty() ? "none" : text;
}

std::string we_speak() {
  std::string text = std::string(kModernProtocolVersion);
  for (std::string_view v : kLegacyProtocolVersions) text += ", " + std::string(v);
  return text;
}

// The verdict on the versions a modern upstream supports.
ProbeVerdict by_versions(const std::string& upstream, const std::vector<json>& versions,
                         const std::string& answer) {
  if (std::find(versions.begin(), versions.end(), json(kModernProtocolVersion)) != versions.end()) {
    return {ProbeVerdict::Kind::modern, ""};
  }
  for (const json& v : versions) {
    if (is_legacy_version(v)) {
      return {ProbeVerdict::Kind::legacy,
              answer + " naming " + v.get<std::string>() + " among its versions"};
    }
  }
  return {ProbeVerdict::Kind::refused,
          "upstream \"" + upstream + "\" supports the protocol versions " + listed(versions) +
              " (" + answer + "); toolmux speaks " + we_speak() + ": none in common"};
}

std::string error_summary(const json& error) {
  std::string text = "an error";
  if (error.is_object() && error.contains("code")) text += " " + error["code"].dump();
  if (error.is_object() && error.contains("message") && error["message"].is_string()) {
    text += " (" + error["message"].get<std::string>() + ")";
  }
  return text;
}

}  // namespace

json relayed_capabilities(const json& client_capabilities) {
  json out = json::object();
  if (!client_capabilities.is_object()) return out;
  for (std::string_view name : kRelayedCapabilities) {
    auto it = client_capabilities.find(std::string(name));
    if (it != client_capabilities.end() && it->is_object()) out[std::string(name)] = *it;
  }
  // Tasks toolmux follows itself (McpClient::call_tool), for any client.
  out["extensions"] = {{kTasksExtensionName, json::object()}};
  return out;
}

json relayed_capabilities() {
  json out = json::object();
  for (std::string_view name : kRelayedCapabilities) out[std::string(name)] = json::object();
  out["extensions"] = {{kTasksExtensionName, json::object()}};
  return out;
}

std::string_view capability_for(std::string_view method) {
  if (method == "elicitation/create") return "elicitation";
  if (method == "sampling/createMessage") return "sampling";
  if (method == "roots/list") return "roots";
  return "";
}

void add_modern_meta(json& params, const json& capabilities, bool log_debug) {
  if (!params.is_object()) params = json::object();
  json& meta = params["_meta"];
  if (!meta.is_object()) meta = json::object();
  meta[kMetaProtocolVersion] = kModernProtocolVersion;
  meta[kMetaClientCapabilities] = capabilities;
  meta[kMetaClientInfo] = {{"name", "toolmux"}, {"version", TOOLMUX_VERSION}};
  if (log_debug) meta[kMetaLogLevel] = "debug";
}

ProbeVerdict judge_probe(const std::string& upstream, const json& result, const json& error,
                         const std::string& no_answer) {
  const std::string who = "upstream \"" + upstream + "\"";
  if (result.is_object()) {
    auto versions = result.find("supportedVersions");
    if (versions == result.end() || !versions->is_array()) {
      return {ProbeVerdict::Kind::refused,
              who + " answered server/discover without a supportedVersions array"};
    }
    return by_versions(upstream, versions_of(*versions), "its DiscoverResult");
  }
  if (!result.is_null()) {
    return {ProbeVerdict::Kind::refused,
            who + " answered server/discover with something else than an object"};
  }
  if (error.is_null())
    return {ProbeVerdict::Kind::legacy, "no answer to server/discover: " + no_answer};
  const json code = error.is_object() ? error.value("code", json()) : json();
  if (code == kUnsupportedProtocolVersionCode) {
    const json data = error.value("data", json());
    const json supported = data.is_object() ? data.value("supported", json()) : json();
    if (supports_modern(error)) {
      return {ProbeVerdict::Kind::refused,
              who +
                  " refused server/discover for 2026-07-28 with -32022 although it names "
                  "2026-07-28 among its supported versions"};
    }
    return by_versions(upstream, versions_of(supported),
                       "server/discover answered -32022 UnsupportedProtocolVersion");
  }
  if (code == kMissingRequiredClientCapabilityCode || code == kHeaderMismatchCode) {
    return {ProbeVerdict::Kind::refused,
            who + " speaks the 2026-07-28 protocol but refused server/discover with " +
                error_summary(error)};
  }
  return {ProbeVerdict::Kind::legacy, "server/discover answered " + error_summary(error)};
}

bool supports_modern(const json& error) {
  if (!error.is_object() || error.value("code", json()) != kUnsupportedProtocolVersionCode) {
    return false;
  }
  const json data = error.value("data", json());
  if (!data.is_object()) return false;
  const std::vector<json> versions = versions_of(data.value("supported", json()));
  return std::find(versions.begin(), versions.end(), json(kModernProtocolVersion)) !=
         versions.end();
}

}  // namespace toolmux
