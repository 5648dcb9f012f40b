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
#include "src/builtins/result_tools.h"
#include "src/store/audit_chain.h"
#include "src/store/cluster_bus.h"
#include "src/store/journal_store.h"
#include "src/store/lazy_result_store.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_journal_store.h"
#include "src/store/pg_write_freeze.h"
#include "src/store/result_inventory.h"

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

namespace {

// `toolmux audit verify` on PostgreSQL: its rows carry no hash chain; what is
// checked is the trigger that keeps them append-only.
int verify_pg_audit(const Listing& listing, std::ostream& out, std::ostream& err) {
  auto guard = pg_audit_guard(*listing.postgres);
  if (!guard.ok()) return failed(err, guard.status());
  const std::string login =
      "; the login " + cell(guard->role) +
      (guard->role_may_change ? " may UPDATE or DELETE toolmux_audit (the trigger still refuses)"
                              : " may not UPDATE or DELETE toolmux_audit");
  if (!guard->trigger) {
    err << "toolmux: the audit table in " << listing.where
        << " is not append-only: its trigger toolmux_audit_append_only is missing or disabled"
        << login << "\n";
    return 1;
  }
  out << guard->records << " records in " << listing.where
      << ", not hash-chained: PostgreSQL's audit table is append-only instead (trigger "
         "toolmux_audit_append_only refuses UPDATE, TRUNCATE and every DELETE but retention's)"
      << login << "\n";
  return 0;
}

// `toolmux audit verify` on RocksDB: every slot's chain walked
// (src/store/audit_chain.h).
int verify_audit_chain_of(const Listing& listing, std::ostream& out, std::ostream& err) {
  auto report = verify_audit_chain(listing.data_dir);
  if (!report.ok()) return failed(err, report.status());
  if (const auto& problem = report->problem) {
    err << "toolmux: the audit chain in " << problem->where << " breaks at record " << problem->seq
        << " (time " << (problem->time ? format_rfc3339(*problem->time) : "unknown") << ", call "
        << (problem->call_id.empty() ? "unknown" : cell(problem->call_id)) << "): " << problem->why
        << "\n";
    return 1;
  }
  std::string line;
  if (report->records == 0) {
    line = "No chained audit records in " + listing.where;
  } else {
    line = std::to_string(report->records) + " records, chain intact from " +
           format_rfc3339(*report->first) + " to " + format_rfc3339(*report->last);
  }
  if (report->markers > 0) {
    line +=
        "; " + std::to_string(report->removed) + " removed by retention, as its signed marker says";
  }
  if (report->unchained > 0) {
    line += "; " + std::to_string(report->unchained) + " unchained (" +
            std::string(kUnchainedNote) + ")";
  }
  out << line << ".\n";
  return 0;
}

}  // namespace

int run_audit(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  auto listing = listing_of(cl);
  if (!listing.ok()) return failed(err, listing.status());
  if (cl.audit_verify) {
    return listing->postgres ? verify_pg_audit(*listing, out, err)
                             : verify_audit_chain_of(*listing, out, err);
  }
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

namespace {

// ---- toolmux results ----

// How many hex digits of a session id's digest name its session: enough to
// tell sessions apart, and a digest is no bearer credential, as the id is
// (whoever has it speaks as that session over HTTP).
constexpr std::size_t kSessionTagLength = 12;

// How a result's owner is shown: a session by a prefix of its id's digest;
// a principal, which owns the results of its 2026-07-28 requests
// (transports/http_sessions.h) and is no secret, by its name, as audit shows it.
std::string session_tag(std::string_view owner) {
  if (owner.starts_with("principal:")) return cell(owner);
  return session_id_digest(owner).substr(0, kSessionTagLength);
}

// Whether --session `wanted` names `owner`: its id, or a prefix of at least
// kSessionTagLength hex digits of its digest (as listed).
bool session_matches(std::string_view wanted, std::string_view owner) {
  if (wanted.empty() || wanted == owner) return true;
  return wanted.size() >= kSessionTagLength && session_id_digest(owner).starts_with(wanted);
}

bool selected(const ResultsCommand& command, const StoredResult& r) {
  return session_matches(command.session, r.owner) &&
         (!command.created_before || r.created < *command.created_before);
}

// Pages as read_tool_result reads them (at most kMaxPageChars characters);
// an empty result has one, empty.
std::uint64_t page_count(const StoredResult& r) {
  return r.chars == 0 ? 1 : (r.chars + kMaxPageChars - 1) / kMaxPageChars;
}

std::string type_text(const StoredFormat& format) {
  return cell(format.mime_type) + (format.base64 ? " (base64)" : "");
}

// CREATED, ID, SESSION, BYTES, PAGES; then TYPE.
constexpr Widths<5> kResultsWidths = {kTimeWidth, 43, kSessionTagLength, 10, 5};

std::string results_header() {
  return table_row(kResultsWidths, {"CREATED", "ID", "SESSION", "BYTES", "PAGES", "TYPE"});
}

std::string results_row(const StoredResult& r) {
  return table_row(kResultsWidths,
                   {format_rfc3339(r.created), cell(r.id), session_tag(r.owner),
                    std::to_string(r.bytes), std::to_string(page_count(r)), type_text(r.format)});
}

json results_json(const StoredResult& r) {
  return {{"id", r.id},
          {"session", session_tag(r.owner)},
          {"created", format_rfc3339(r.created)},
          {"bytes", r.bytes},
          {"chars", r.chars},
          {"pages", page_count(r)},
          {"mime_type", redact(r.format.mime_type)},
          {"base64", r.format.base64}};
}

// A stored text as `results show` prints it: redacted as results are, and
// terminal-safe with its lines kept (every other control is escaped).
std::string shown_text(std::string_view text) {
  const std::string redacted = redact(text);
  std::string out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = redacted.find('\n', start);
    out += terminal_text(std::string_view(redacted).substr(start, end - start));
    if (end == std::string::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

// A failure of `toolmux results`: its message may repeat an id as given.
int results_failed(std::ostream& err, const Status& status) {
  err << "toolmux: " << terminal_text(status.message(), Unprintable::space) << "\n";
  return 1;
}

Result<std::unique_ptr<ResultInventory>> inventory_of(const CommandLine& cl) {
  ResultStoreOptions options;
  if (cl.serve.store == StoreKind::postgresql) {
    auto store = open_shared_store(cl.serve);
    if (!store.ok()) return store.status();
    options.postgres = std::move(*store);
  } else {
    options.data_dir = data_dir_of(cl);
  }
  return ResultInventory::open(options);
}

int list_results(const CommandLine& cl, const ResultInventory& inventory, std::ostream& out,
                 std::ostream& err) {
  auto all = inventory.list();
  if (!all.ok()) return results_failed(err, all.status());
  Printer printer(out, cl.json ? "" : results_header());
  for (const StoredResult& r : *all) {
    if (!selected(cl.results, r)) continue;
    if (!printer.print(cl.json ? json_line(results_json(r)) : results_row(r))) break;
  }
  if (printer.count() == 0 && !cl.json) {
    const bool filtered = !cl.results.session.empty() || cl.results.created_before;
    out << "No stored results in " << inventory.where() << (filtered ? " match those filters" : "")
        << ".\n";
  }
  return 0;
}

int show_result(const CommandLine& cl, const ResultInventory& inventory, std::ostream& out,
                std::ostream& err) {
  const ResultsCommand& command = cl.results;
  auto found = inventory.find(command.id);
  if (!found.ok()) return results_failed(err, found.status());
  const StoredResult& r = *found;
  const std::uint64_t pages = page_count(r);
  if (command.page > pages) {
    return results_failed(
        err,
        Status::out_of_range("result " + r.id + " has " + std::to_string(pages) + " page" +
                             (pages == 1 ? "" : "s") + ", not " + std::to_string(command.page)));
  }
  // The pages to read: one, or all in turn.
  const std::uint64_t first = command.page == 0 ? 0 : command.page - 1;
  const std::uint64_t last = command.page == 0 ? pages : command.page;
  const auto page_text = [&](std::uint64_t index) -> Result<std::string> {
    auto page = inventory.read(r, index * kMaxPageChars, kMaxPageChars);
    if (!page.ok()) return page.status();
    return std::move(page->text);
  };
  if (cl.json) {
    json object = results_json(r);
    if (command.page > 0) object["page"] = command.page;
    std::string text;
    for (std::uint64_t i = first; i < last; ++i) {
      auto part = page_text(i);
      if (!part.ok()) return results_failed(err, part.status());
      text += *part;
    }
    object["text"] = redact(text);
    out << terminal_json(object.dump(-1, ' ', false, json::error_handler_t::replace)) << "\n";
    return 0;
  }
  out << "ID       " << cell(r.id) << "\n"
      << "SESSION  " << session_tag(r.owner) << "\n"
      << "CREATED  " << format_rfc3339(r.created) << "\n"
      << "BYTES    " << r.bytes << "\n"
      << "CHARS    " << r.chars << "\n"
      << "PAGES    " << pages << "\n"
      << "TYPE     " << type_text(r.format) << "\n";
  if (command.page > 0) {
    const std::uint64_t from = first * kMaxPageChars;
    out << "PAGE     " << command.page << " of " << pages << ": characters " << from << " to "
        << std::min<std::uint64_t>(from + kMaxPageChars, r.chars) << "\n";
  }
  out << "\n";
  bool ends_line = true;
  for (std::uint64_t i = first; i < last; ++i) {
    auto part = page_text(i);
    if (!part.ok()) return results_failed(err, part.status());
    if (part->empty()) continue;
    out << shown_text(*part);
    ends_line = part->back() == '\n';
  }
  if (!ends_line) out << "\n";
  return 0;
}

std::string deleted_line(const StoredResult& r) {
  return "Deleted result " + r.id + " (session " + session_tag(r.owner) + ", " +
         std::to_string(r.bytes) + " bytes)";
}

int delete_results(const CommandLine& cl, ResultInventory& inventory, std::ostream& out,
                   std::ostream& err) {
  const ResultsCommand& command = cl.results;
  if (!command.id.empty()) {
    auto found = inventory.find(command.id);
    if (!found.ok()) return results_failed(err, found.status());
    if (Status removed = inventory.remove(found->id); !removed.ok()) {
      return results_failed(err, removed);
    }
    out << deleted_line(*found) << " from " << inventory.where() << ".\n";
    return 0;
  }
  auto all = inventory.list();
  if (!all.ok()) return results_failed(err, all.status());
  std::size_t deleted = 0;
  std::size_t failures = 0;
  for (const StoredResult& r : *all) {
    if (!selected(command, r)) continue;
    if (Status removed = inventory.remove(r.id); !removed.ok()) {
      results_failed(err, removed);
      ++failures;
      continue;
    }
    out << deleted_line(r) << ".\n";
    ++deleted;
  }
  if (deleted == 0 && failures == 0) {
    out << "No stored results in " << inventory.where() << " match those filters.\n";
    return 0;
  }
  out << "Deleted " << deleted << " result" << (deleted == 1 ? "" : "s") << " from "
      << inventory.where();
  if (failures > 0) out << "; " << failures << " could not be deleted";
  out << ".\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace

int run_results(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  auto inventory = inventory_of(cl);
  if (!inventory.ok()) return results_failed(err, inventory.status());
  switch (cl.results.action) {
    case ResultsCommand::Action::list:
      return list_results(cl, **inventory, out, err);
    case ResultsCommand::Action::show:
      return show_result(cl, **inventory, out, err);
    case ResultsCommand::Action::remove:
      return delete_results(cl, **inventory, out, err);
  }
  return 1;
}

}  // namespace toolmux
