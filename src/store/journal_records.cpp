#include "src/store/journal_records.h"

#include <algorithm>

#include "src/base/redact.h"

namespace toolmux {

std::string journal_json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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
  r.duration_ms = std::chrono::duration<double, std::milli>(now - intent.started).count();
  // The intent keeps its key as sent (replay looks it up); the record shows it
  // as every audit record does, redacted.
  r.idempotency_key = redact(intent.idempotency_key);
  return r;
}

std::int64_t retention_ns(std::chrono::hours retention) {
  constexpr std::int64_t kMaxHours = 100ll * 365 * 24;
  return std::clamp<std::int64_t>(retention.count(), 0, kMaxHours) * 3'600'000'000'000;
}

}  // namespace toolmux
