#include "src/store/audit_chain.h"

#include <nlohmann/json.hpp>

#include "src/base/digest.h"
#include "src/base/json_text.h"

namespace toolmux {

namespace {

using nlohmann::json;

// The label the marker key is derived under (never changed: a marker signed
// under another label no longer verifies).
constexpr std::string_view kMarkerKeyLabel = "toolmux audit retention marker v1";

json marker_json(const RetentionMarker& m) {
  return {{"kind", "retention"},  {"first_seq", m.first_seq},     {"last_seq", m.last_seq},
          {"removed", m.removed}, {"earliest_ns", m.earliest_ns}, {"latest_ns", m.latest_ns},
          {"prev", m.prev},       {"last_hash", m.last_hash},     {"written_ns", m.written_ns}};
}

std::string canonical(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string chained_audit_text(std::string record_text, const AuditChainLink& link) {
  if (!record_text.empty() && record_text.back() == '}') record_text.pop_back();
  record_text += ",\"chain_prev\":";
  append_json_string(record_text, link.prev);
  record_text += ",\"chain_seq\":";
  record_text += std::to_string(link.seq);
  record_text += '}';
  return record_text;
}

std::optional<AuditChainLink> audit_chain_link(std::string_view stored) {
  const json j = json::parse(stored.begin(), stored.end(), nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto seq = j.find("chain_seq");
  auto prev = j.find("chain_prev");
  if (seq == j.end() || !seq->is_number_unsigned() || prev == j.end() || !prev->is_string()) {
    return std::nullopt;
  }
  return AuditChainLink{seq->get<std::uint64_t>(), prev->get<std::string>()};
}

std::string audit_chain_hash(std::string_view stored) { return blake2b_256_hex(stored); }

std::string retention_marker_key(const SealingKey& state_key) {
  return hmac_sha256_hex(std::string_view(reinterpret_cast<const char*>(state_key.bytes.data()),
                                          state_key.bytes.size()),
                         kMarkerKeyLabel);
}

std::string signed_marker_text(const RetentionMarker& marker, const std::string& marker_key) {
  json j = marker_json(marker);
  j["mac"] = hmac_sha256_hex(marker_key, canonical(j));
  return canonical(j);
}

Result<RetentionMarker> marker_from_text(std::string_view stored, const std::string& marker_key) {
  json j = json::parse(stored.begin(), stored.end(), nullptr, false);
  const auto number = [&j](const char* name) -> std::optional<json> {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return *it;
  };
  const auto text = [&j](const char* name) -> std::optional<std::string> {
    auto it = j.find(name);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  if (!j.is_object() || j.value("kind", "") != "retention" || !text("mac") ||
      !number("first_seq") || !number("last_seq") || !number("removed") || !number("earliest_ns") ||
      !number("latest_ns") || !number("written_ns") || !text("prev") || !text("last_hash")) {
    return Status::invalid_argument("not a retention marker");
  }
  const std::string mac = *text("mac");
  j.erase("mac");
  if (hmac_sha256_hex(marker_key, canonical(j)) != mac) {
    return Status::invalid_argument(
        "its signature does not match (edited, or not written by this toolmux)");
  }
  RetentionMarker m;
  m.first_seq = number("first_seq")->get<std::uint64_t>();
  m.last_seq = number("last_seq")->get<std::uint64_t>();
  m.removed = number("removed")->get<std::uint64_t>();
  m.earliest_ns = number("earliest_ns")->get<std::int64_t>();
  m.latest_ns = number("latest_ns")->get<std::int64_t>();
  m.written_ns = number("written_ns")->get<std::int64_t>();
  m.prev = *text("prev");
  m.last_hash = *text("last_hash");
  return m;
}

}  // namespace toolmux
