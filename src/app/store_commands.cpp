#include "src/app/store_commands.h"

#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "src/app/shared_store.h"
#include "src/app/time_text.h"
#include "src/app/write_freeze.h"
#include "src/base/redact.h"
#include "src/base/terminal_text.h"
#include "src/base/utf8.h"
#include "src/store/cluster_bus.h"
#include "src/store/journal_store.h"
#include "src/store/lazy_result_store.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_journal_store.h"
#include "src/store/pg_write_freeze.h"

namespace toolmux {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path data_dir_of(const CommandLine& cl) {
  return cl.serve.data_dir.empty() ? default_data_dir() : cl.serve.data_dir;
}

// `text` as a table cell: redacted as the log is (src/base/redact.h), with
// no character a terminal would act on (src/base/terminal_text.h), each a
// space; "-" when empty.
std::string cell(std::string_view text) {
  return text.empty() ? "-" : terminal_text(redact(text), Unprintable::space);
}

// The widths of a table's columns but the last, which is not padded.
template <std::size_t N>
using Widths = std::array<std::size_t, N>;

// One line of a table: each cell padded to its column's width, and two
// spaces; a longer cell pushes the rest of the row right.
template <std::size_t N>
std::string table_row(const Widths<N>& widths, const std::array<std::string, N + 1>& cells) {
  std::string row;
  for (std::size_t i = 0; i < N; ++i) {
    row += cells[i];
    const std::size_t length = utf8_length(cells[i]);
    row.append(length < widths[i] ? widths[i] - length : 0, ' ');
    row += "  ";
  }
  row += cells[N];
  row += '\n';
  return row;
}

// Every text a listing shows is redacted as the log is, whatever wrote it: a
// tool's name as a client sent it, an idempotency key (which the journal
// keeps as sent, since a repeat of the call looks it up), a rationale.
json text_or_null(std::string_view text) {
  return text.empty() ? json(nullptr) : json(redact(text));
}

std::string json_line(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string duration_text(double ms) {
  char out[32];
  if (ms < 10) {
    std::snprintf(out, sizeof out, "%.1f ms", ms);
  } else if (ms < 10'000) {
    std::snprintf(out, sizeof out, "%.0f ms", ms);
  } else {
    std::snprintf(out, sizeof out, "%.1f s", ms / 1000);
  }
  return out;
}

// A journal entry's state: its outcome, "running", or "interrupted" (marked
// so, or without outcome in a slot no live process holds: its process died).
std::string state_of(const JournalEntry& e) {
  if (e.outcome) return *e.outcome;
  return e.running ? "running" : "interrupted";
}

constexpr std::size_t kTimeWidth = 24;  // 2026-12-01T10:00:00.123Z
// STARTED, CALL, TOOL, CLASS, PRINCIPAL, APPROVER, KEY; then STATE.
constexpr Widths<7> kJournalWidths = {kTimeWidth, 16, 20, 15, 12, 12, 12};
// TIME, PRINCIPAL, SESSION, TOOL, CONFIRMATION, APPROVER, OUTCOME; then DURATION.
constexpr Widths<7> kAuditWidths = {kTimeWidth, 12, 12, 20, 12, 12, 17};

std::string journal_header() {
  return table_row(kJournalWidths,
                   {"STARTED", "CALL", "TOOL", "CLASS", "PRINCIPAL", "APPROVER", "KEY", "STATE"});
}

std::string journal_row(const JournalEntry& e) {
  const JournalIntent& i = e.intent;
  const std::string state = state_of(e);
  return table_row(kJournalWidths,
                   {format_rfc3339(i.started), cell(i.call_id), cell(i.tool), cell(i.side_effect),
                    cell(i.principal), cell(i.approver), cell(i.idempotency_key),
                    state == "interrupted" ? "interrupted: not re-run" : cell(state)});
}

json journal_json(const JournalEntry& e) {
  const JournalIntent& i = e.intent;
  json out = {{"started", format_rfc3339(i.started)},
              {"ended", e.ended ? json(format_rfc3339(*e.ended)) : json(nullptr)},
              {"call_id", i.call_id},
              {"tool", redact(i.tool)},
              {"side_effect", i.side_effect},
              {"arguments_digest", i.arguments_digest},
              {"principal", redact(i.principal)},
              {"session", text_or_null(i.session)},
              {"approver", text_or_null(i.approver)},
              {"rationale", text_or_null(i.rationale)},
              {"idempotency_key", text_or_null(i.idempotency_key)},
              {"outcome", e.outcome ? json(*e.outcome) : json(nullptr)},
              {"state", state_of(e)},
              {"result_too_large", e.result_too_large}};
  if (!e.instance.empty()) out["instance"] = e.instance;  // PostgreSQL
  return out;
}

std::string audit_header() {
  return table_row(kAuditWidths, {"TIME", "PRINCIPAL", "SESSION", "TOOL", "CONFIRMATION",
                                  "APPROVER", "OUTCOME", "DURATION"});
}

std::string audit_row(const AuditRecord& r) {
  return table_row(kAuditWidths, {format_rfc3339(r.time), cell(r.principal), cell(r.session),
                                  cell(r.tool), cell(r.confirmation), cell(r.approver),
                                  cell(r.outcome), duration_text(r.duration_ms)});
}

json audit_json(const AuditRecord& r) {
  json out = {{"time", format_rfc3339(r.time)},
              {"call_id", r.call_id},
              {"principal", redact(r.principal)},
              {"session", text_or_null(r.session)},
              {"tool", redact(r.tool)},
              {"side_effect", text_or_null(r.side_effect)},
              {"arguments", redact_json(r.arguments)},
              {"confirmation", r.confirmation},
              {"approver", text_or_null(r.approver)},
              {"rationale", text_or_null(r.rationale)},
              {"outcome", r.outcome},
              {"duration_ms", r.duration_ms},
              {"idempotency_key", text_or_null(r.idempotency_key)}};
  if (!r.defaults.is_null()) out["defaults"] = redact_json(r.defaults);
  if (!r.instance.empty()) out["instance"] = r.instance;  // PostgreSQL
  return out;
}

// Prints rows as they come: a table's header before the first one. False
// once `out` failed (a closed pipe), which stops the reading.
class Printer {
 public:
  Printer(std::ostream& out, std::string header) : out_(out), header_(std::move(header)) {}
  bool print(const std::string& row) {
    if (count_++ == 0) out_ << header_;
    out_ << row;
    return static_cast<bool>(out_);
  }
  std::size_t count() const { return count_; }

 private:
  std::ostream& out_;
  std::string header_;  // "" for JSON Lines
  std::size_t count_ = 0;
};

int failed(std::ostream& err, const Status& status) {
  err << "toolmux: " << status.message() << "\n";
  return 1;
}

// Where journal and audit read: the data directory, or with --store
// postgresql the database every instance writes to.
struct Listing {
  fs::path data_dir;
  std::unique_ptr<PgPool> postgres;  // null: the data directory
  std::string where;                 // for "No ... in WHERE."

  Status for_each(const JournalEntryFn& fn) const {
    return postgres ? for_each_journal_entry(*postgres, fn) : for_each_journal_entry(data_dir, fn);
  }
  Status for_each(const AuditQuery& query, const AuditRecordFn& fn) const {
    return postgres ? for_each_audit_record(*postgres, query, fn)
                    : for_each_audit_record(data_dir, query, fn);
  }
};

Result<Listing> listing_of(const CommandLine& cl) {
  Listing listing;
  if (cl.serve.store == StoreKind::postgresql) {
    auto url = store_connection_string(cl.serve);
    if (!url.ok()) return url.status();
    PgPoolOptions options;
    options.conninfo = std::move(*url);
    options.max_connections = 1;  // one reader, one statement at a time
    auto pool = PgPool::make(std::move(options));
    if (!pool.ok()) return pool.status();
    listing.where = "the store at " + (*pool)->target();
    listing.postgres = std::move(*pool);
    return listing;
  }
  listing.data_dir = data_dir_of(cl);
  listing.where = (listing.data_dir / "journal").string();
  return listing;
}

}  // namespace

int run_journal(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  auto listing = listing_of(cl);
  if (!listing.ok()) return failed(err, listing.status());
  Printer printer(out, cl.json ? "" : journal_header());
  Status status = listing->for_each([&](const JournalEntry& e) {
    return printer.print(cl.json ? json_line(journal_json(e)) : journal_row(e));
  });
  if (!status.ok()) return failed(err, status);
  if (printer.count() == 0 && !cl.json) out << "No journaled calls in " << listing->where << ".\n";
  return 0;
}

int run_audit(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  auto listing = listing_of(cl);
  if (!listing.ok()) return failed(err, listing.status());
  Printer printer(out, cl.json ? "" : audit_header());
  Status status = listing->for_each(cl.audit_query, [&](const AuditRecord& r) {
    return printer.print(cl.json ? json_line(audit_json(r)) : audit_row(r));
  });
  if (!status.ok()) return failed(err, status);
  if (printer.count() == 0 && !cl.json) {
    const AuditQuery& q = cl.audit_query;
    const bool filtered = q.since || !q.tool.empty() || !q.principal.empty();
    out << "No audit records in " << listing->where << (filtered ? " match those filters" : "")
        << ".\n";
  }
  return 0;
}

namespace {

// `toolmux freeze --store postgresql`: the deployment's freeze, in the store,
// and every instance told at once.
int run_shared_freeze(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  auto store = open_shared_store(cl.serve);
  if (!store.ok()) return failed(err, store.status());
  PgPool& pool = (*store)->pool();
  const std::string where = "the store at " + (*store)->target();
  Status status;
  switch (cl.freeze_action) {
    case FreezeAction::on:
      status = freeze_pg_writes(pool, clean_freeze_reason(cl.freeze_reason),
                                std::chrono::system_clock::now());
      if (status.ok()) {
        out << "Write freeze on in " << where
            << ": every instance on it refuses every tool but read_only ones.\n";
      }
      break;
    case FreezeAction::off:
      status = thaw_pg_writes(pool);
      if (status.ok()) out << "Write freeze off in " << where << ".\n";
      break;
    case FreezeAction::status: {
      auto freeze = read_pg_write_freeze(pool);
      status = freeze.status();
      if (!freeze.ok()) break;
      if (freeze->has_value()) {
        const std::string reason = clean_freeze_reason((*freeze)->reason);
        out << "Write freeze on in " << where << " since " << format_rfc3339((*freeze)->since)
            << (reason.empty() ? " (no reason given)" : ": " + cell(reason)) << ".\n";
      } else {
        out << "Write freeze off in " << where << ".\n";
      }
      return 0;
    }
  }
  if (!status.ok()) return failed(err, status);
  // The instances look at the store every second anyway: this is only sooner.
  if (const Status told = notify_cluster(pool, "toolmux freeze", "freeze"); !told.ok()) {
    err << "toolmux: the instances were not told at once (" << told.message()
        << "); they see the change within a second or two.\n";
  }
  return 0;
}

}  // namespace

int run_freeze(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  if (cl.serve.store == StoreKind::postgresql) return run_shared_freeze(cl, out, err);
  const fs::path dir = data_dir_of(cl);
  Status status;
  switch (cl.freeze_action) {
    case FreezeAction::on:
      status = freeze_writes(dir, cl.freeze_reason);
      if (status.ok()) {
        out << "Write freeze on in " << dir.string()
            << ": servers on it refuse every tool but read_only ones.\n";
      }
      break;
    case FreezeAction::off:
      status = thaw_writes(dir);
      if (status.ok()) out << "Write freeze off in " << dir.string() << ".\n";
      break;
    case FreezeAction::status:
      if (auto reason = read_write_freeze(dir)) {
        out << "Write freeze on in " << dir.string()
            << (reason->empty() ? " (no reason given)" : ": " + cell(*reason)) << ".\n";
      } else {
        out << "Write freeze off in " << dir.string() << ".\n";
      }
      break;
  }
  return status.ok() ? 0 : failed(err, status);
}

}  // namespace toolmux
