#include "src/store/journal_records.h"

#include <algorithm>

#include "src/base/json_text.h"
#include "src/base/redact.h"
#include "src/store/db_keys.h"

namespace toolmux {

std::string journal_json_text(const nlohmann::json& value) { return json_text(value); }

nlohmann::json capped_audit_arguments(const nlohmann::json& arguments) {
  if (arguments.is_null()) return arguments;
  const std::size_t size = journal_json_text(arguments).size();
  if (size <= kMaxAuditArgumentsBytes) return arguments;
  return "(" + std::to_string(size) + " bytes of arguments, over the audit record's " +
         std::to_string(kMaxAuditArgumentsBytes) + "-byte limit)";
}

AuditRecord interrupted_record(const JournalIntent& intent,
                               std::chrono::system_clock::time_point now) {
  AuditRecord r;
  r.time = now;
  r.call_id = intent.call_id;
  r.principal = intent.principal;
  r.session = intent.session;
  r.tool = intent.tool;
  r.side_effect = intent.side_effect;
  r.confirmation = intent.approver.empty() ? "not_required" : "accepted";
  r.approver = intent.approver;
  r.rationale = intent.rationale;
  r.outcome = "interrupted";
  r.duration_ms =
      to_the_microsecond(std::chrono::duration<double, std::milli>(now - intent.started).count());
  // The intent keeps its key as sent (replay looks it up); the record shows it
  // as every audit record does, redacted.
  r.idempotency_key = redact(intent.idempotency_key);
  return r;
}

std::int64_t retention_ns(std::chrono::hours retention) {
  constexpr std::int64_t kMaxHours = 100ll * 365 * 24;
  return std::clamp<std::int64_t>(retention.count(), 0, kMaxHours) * 3'600'000'000'000;
}

namespace {

using nlohmann::json;

std::string text_of(const json& j, const char* name) {
  auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t number_of(const json& j, const char* name) {
  auto it = j.find(name);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

}  // namespace

json entry_json(const JournalEntry& e) {
  const JournalIntent& i = e.intent;
  json j = {{"call_id", i.call_id},
            {"tool", i.tool},
            {"side_effect", i.side_effect},
            {"arguments_digest", i.arguments_digest},
            {"principal", i.principal},
            {"session", i.session},
            {"approver", i.approver},
            {"rationale", i.rationale},
            {"idempotency_key", i.idempotency_key},
            {"started_ns", to_ns(i.started)}};
  if (e.outcome) j["outcome"] = *e.outcome;
  if (e.ended) j["ended_ns"] = to_ns(*e.ended);
  if (e.result_too_large) j["result_too_large"] = true;
  return j;
}

std::optional<JournalEntry> entry_from_text(std::string_view text) {
  return entry_from_json(json::parse(text.begin(), text.end(), nullptr, false));
}

std::optional<JournalEntry> entry_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;  // damaged: skipped
  JournalEntry e;
  JournalIntent& i = e.intent;
  i.call_id = text_of(j, "call_id");
  i.tool = text_of(j, "tool");
  i.side_effect = text_of(j, "side_effect");
  i.arguments_digest = text_of(j, "arguments_digest");
  i.principal = text_of(j, "principal");
  i.session = text_of(j, "session");
  i.approver = text_of(j, "approver");
  i.rationale = text_of(j, "rationale");
  i.idempotency_key = text_of(j, "idempotency_key");
  i.started = from_ns(number_of(j, "started_ns"));
  if (j.contains("outcome")) e.outcome = text_of(j, "outcome");
  if (j.contains("ended_ns")) e.ended = from_ns(number_of(j, "ended_ns"));
  e.result_too_large = j.value("result_too_large", false);
  return e;
}

json audit_json(const AuditRecord& r) {
  json arguments = capped_audit_arguments(r.arguments);
  json record = {{"time_ns", to_ns(r.time)},
                 {"call_id", r.call_id},
                 {"principal", r.principal},
                 {"session", r.session},
                 {"tool", r.tool},
                 {"side_effect", r.side_effect},
                 {"arguments", std::move(arguments)},
                 {"confirmation", r.confirmation},
                 {"approver", r.approver},
                 {"rationale", r.rationale},
                 {"outcome", r.outcome},
                 {"duration_ms", r.duration_ms},
                 {"idempotency_key", r.idempotency_key}};
  if (!r.defaults.is_null()) record["defaults"] = capped_audit_arguments(r.defaults);
  return record;
}

std::string audit_text(const AuditRecord& r) {
  std::string out;
  out.reserve(256 + r.principal.size() + r.tool.size() + r.rationale.size());
  // Each key written as it reads (`,"key":`): plain ASCII, nothing to escape.
  auto member = [&out](std::string_view key_text, std::string_view value) {
    out += key_text;
    append_json_string(out, value);
  };
  // The members in nlohmann's order (its objects sort their keys), so that a
  // record reads the same whichever way it was written.
  // Arguments as capped_audit_arguments keeps them, their text made once:
  // its size decides whether it is kept.
  auto arguments_member = [&out](std::string_view key_text, const json& arguments) {
    out += key_text;
    if (arguments.is_null()) {
      out += "null";
      return;
    }
    const std::string text = journal_json_text(arguments);
    if (text.size() <= kMaxAuditArgumentsBytes) {
      out += text;
    } else {
      append_json_string(out, "(" + std::to_string(text.size()) +
                                  " bytes of arguments, over the audit record's " +
                                  std::to_string(kMaxAuditArgumentsBytes) + "-byte limit)");
    }
  };
  member("{\"approver\":", r.approver);
  arguments_member(",\"arguments\":", r.arguments);
  member(",\"call_id\":", r.call_id);
  member(",\"confirmation\":", r.confirmation);
  if (!r.defaults.is_null()) arguments_member(",\"defaults\":", r.defaults);
  out += ",\"duration_ms\":";
  append_json_milliseconds(out, r.duration_ms);
  member(",\"idempotency_key\":", r.idempotency_key);
  member(",\"outcome\":", r.outcome);
  member(",\"principal\":", r.principal);
  member(",\"rationale\":", r.rationale);
  member(",\"session\":", r.session);
  member(",\"side_effect\":", r.side_effect);
  out += ",\"time_ns\":";
  append_json_number(out, to_ns(r.time));
  member(",\"tool\":", r.tool);
  out += '}';
  return out;
}

std::optional<AuditRecord> audit_from_text(std::string_view text) {
  return audit_from_json(json::parse(text.begin(), text.end(), nullptr, false));
}

std::optional<AuditRecord> audit_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;  // damaged: skipped
  AuditRecord r;
  r.time = from_ns(number_of(j, "time_ns"));
  r.call_id = text_of(j, "call_id");
  r.principal = text_of(j, "principal");
  r.session = text_of(j, "session");
  r.tool = text_of(j, "tool");
  r.side_effect = text_of(j, "side_effect");
  if (auto it = j.find("arguments"); it != j.end()) r.arguments = *it;
  if (auto it = j.find("defaults"); it != j.end()) r.defaults = *it;
  r.confirmation = text_of(j, "confirmation");
  r.approver = text_of(j, "approver");
  r.rationale = text_of(j, "rationale");
  r.outcome = text_of(j, "outcome");
  if (auto it = j.find("duration_ms"); it != j.end() && it->is_number()) {
    r.duration_ms = it->get<double>();
  }
  r.idempotency_key = text_of(j, "idempotency_key");
  return r;
}

}  // namespace toolmux
