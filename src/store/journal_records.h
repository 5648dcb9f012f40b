// What the journal stores (journal_store.h) write the same way: JSON text,
// entries and records as JSON, an audit record's capped arguments, the record
// of a call found interrupted, and the retention as a number. Internal to
// src/store.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/store/journal_store.h"

namespace toolmux {

// JSON text; strings that are not UTF-8 get U+FFFD rather than an exception.
std::string journal_json_text(const nlohmann::json& value);

// An audit record's arguments as kept: as given, or, when their JSON text is
// longer than kMaxAuditArgumentsBytes, a string saying how large they were.
nlohmann::json capped_audit_arguments(const nlohmann::json& arguments);

// The audit record of a call found interrupted at `now`: what its intent says,
// its idempotency key redacted as every audit record's is.
AuditRecord interrupted_record(const JournalIntent& intent,
                               std::chrono::system_clock::time_point now);

// A journal entry and an audit record as JSON (RocksDB keeps them so, and so
// does a spool of what could not be written), and back; text that is not an
// object gives nullopt, a missing field its empty value.
nlohmann::json entry_json(const JournalEntry& entry);
std::optional<JournalEntry> entry_from_text(std::string_view text);
std::optional<JournalEntry> entry_from_json(const nlohmann::json& j);
nlohmann::json audit_json(const AuditRecord& record);
// journal_json_text(audit_json(record)), written straight to text: the same
// members, in the same (sorted) order, with no tree between (one per call).
std::string audit_text(const AuditRecord& record);
std::optional<AuditRecord> audit_from_text(std::string_view text);
std::optional<AuditRecord> audit_from_json(const nlohmann::json& j);

// The retention in nanoseconds, capped at 100 years so that arithmetic on
// times cannot overflow.
std::int64_t retention_ns(std::chrono::hours retention);

// Everything a for_each_ reader hands over, in a vector: `read` is called
// with the function that collects.
template <typename Item, typename Read>
Result<std::vector<Item>> collect_all(const Read& read) {
  std::vector<Item> out;
  Status status = read([&out](const Item& item) {
    out.push_back(item);
    return true;
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace toolmux
