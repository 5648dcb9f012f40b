#include "src/store/pg_journal_store.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <utility>

#include "src/base/random_id.h"
#include "src/base/utf8.h"
#include "src/store/db_keys.h"
#include "src/store/journal_records.h"
#include "src/store/pg_schema.h"

namespace toolmux {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxInterruptedListed = 1024;
constexpr std::int64_t kRetentionEveryNs = 3'600'000'000'000;  // an hour
// Rows a reader fetches at a time.
constexpr int kPageRows = 500;

// Whether the lock of entry j's instance is held, in this database.
const std::string kHolderLocked =
    "EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objsubid = 2 "
    "AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = "
    "current_database()) AND l.classid = " +
    std::to_string(kPgJournalHolderSpace) + " AND l.objid = j.holder::bigint::oid)";

// Whether entry j's instance may be alive: it holds its lock, or the entry
// began before the server last started and that start is less than `grace`
// ago (every instance lost its lock with the server; a live one takes it
// again within seconds).
std::string holder_alive(std::chrono::seconds grace) {
  return "(" + kHolderLocked +
         " OR (j.started_ns < (extract(epoch FROM pg_postmaster_start_time()) * 1e9)::bigint "
         "AND now() - pg_postmaster_start_time() < make_interval(secs => " +
         std::to_string(grace.count()) + ")))";
}

// An entry's columns, in the order entry_at() reads them, then whether its
// instance may be alive (holder_alive).
std::string entry_columns(std::chrono::seconds grace) {
  return "j.seq, j.call_id, j.instance, j.tool, j.side_effect, j.arguments_digest, j.principal, "
         "j.session, j.approver, j.rationale, coalesce(j.idempotency_key, ''), j.started_ns, "
         "j.outcome, j.ended_ns, j.result_too_large, " +
         holder_alive(grace);
}

// What the readers (`toolmux journal`) judge running by.
const std::string kEntryColumns = entry_columns(JournalStoreOptions{}.restart_grace);

// An audit record's columns, in the order record_at() reads them.
constexpr const char* kAuditColumns =
    "time_ns, instance, call_id, principal, session, tool, side_effect, arguments, "
    "confirmation, approver, rationale, outcome, duration_ms, idempotency_key, seq, defaults";

constexpr const char* kAuditInsert =
    "INSERT INTO toolmux_audit (time_ns, instance, call_id, principal, session, tool, "
    "side_effect, arguments, confirmation, approver, rationale, outcome, duration_ms, "
    "idempotency_key, defaults) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
    "$14, $15)";

// Text PostgreSQL can hold: valid UTF-8 (U+FFFD for what is not) without NUL
// bytes (U+FFFD for each).
std::string pg_text(std::string_view text) {
  std::string in = lossy_utf8(text);
  if (in.find('\0') == std::string::npos) return in;
  std::string out;
  out.reserve(in.size() + 8);
  for (char c : in) {
    if (c == '\0') {
      out += "\xEF\xBF\xBD";
    } else {
      out += c;
    }
  }
  return out;
}

PgParam text_param(std::string_view text) { return PgParam::text(pg_text(text)); }

JournalEntry entry_at(const PgResult& rows, int row) {
  JournalEntry e;
  JournalIntent& i = e.intent;
  i.call_id = rows.text(row, 1);
  e.instance = rows.text(row, 2);
  i.tool = rows.text(row, 3);
  i.side_effect = rows.text(row, 4);
  i.arguments_digest = rows.text(row, 5);
  i.principal = rows.text(row, 6);
  i.session = rows.text(row, 7);
  i.approver = rows.text(row, 8);
  i.rationale = rows.text(row, 9);
  i.idempotency_key = rows.text(row, 10);
  i.started = from_ns(rows.integer(row, 11));
  if (!rows.is_null(row, 12)) e.outcome = std::string(rows.text(row, 12));
  if (!rows.is_null(row, 13)) e.ended = from_ns(rows.integer(row, 13));
  e.result_too_large = rows.text(row, 14) == "t";
  e.running = !e.outcome && rows.text(row, 15) == "t";
  return e;
}

AuditRecord record_at(const PgResult& rows, int row) {
  AuditRecord r;
  r.time = from_ns(rows.integer(row, 0));
  r.instance = rows.text(row, 1);
  r.call_id = rows.text(row, 2);
  r.principal = rows.text(row, 3);
  r.session = rows.text(row, 4);
  r.tool = rows.text(row, 5);
  r.side_effect = rows.text(row, 6);
  const std::string_view arguments = rows.text(row, 7);
  r.arguments = json::parse(arguments.begin(), arguments.end(), nullptr, false);
  if (r.arguments.is_discarded()) r.arguments = nullptr;
  r.confirmation = rows.text(row, 8);
  r.approver = rows.text(row, 9);
  r.rationale = rows.text(row, 10);
  r.outcome = rows.text(row, 11);
  r.duration_ms = std::strtod(std::string(rows.text(row, 12)).c_str(), nullptr);
  r.idempotency_key = rows.text(row, 13);
  const std::string_view defaults = rows.text(row, 15);
  if (!defaults.empty()) {
    r.defaults = json::parse(defaults.begin(), defaults.end(), nullptr, false);
    if (r.defaults.is_discarded()) r.defaults = nullptr;
  }
  return r;
}

// The parameters of kAuditInsert.
std::vector<PgParam> audit_params(const AuditRecord& r, const std::string& instance) {
  const double duration = std::isfinite(r.duration_ms) ? r.duration_ms : 0.0;
  return {
      PgParam::integer(to_ns(r.time)),
      text_param(instance),
      text_param(r.call_id),
      text_param(r.principal),
      text_param(r.session),
      text_param(r.tool),
      text_param(r.side_effect),
      PgParam::text(journal_json_text(capped_audit_arguments(r.arguments))),
      text_param(r.confirmation),
      text_param(r.approver),
      text_param(r.rationale),
      text_param(r.outcome),
      PgParam::text(json(duration).dump()),
      text_param(r.idempotency_key),
      PgParam::text(r.defaults.is_null() ? std::string()
                                         : journal_json_text(capped_audit_arguments(r.defaults)))};
}

// Marks entry `seq` interrupted at `now` with its audit record, in
// `transaction`, unless it has an outcome by now: the entry as marked, or
// nullopt.
Result<std::optional<JournalEntry>> mark_interrupted(PgTransaction& transaction, std::int64_t seq,
                                                     std::int64_t now) {
  auto marked = transaction.exec(
      "UPDATE toolmux_journal j SET outcome = 'interrupted', ended_ns = $2 "
      "WHERE j.seq = $1 AND j.outcome IS NULL RETURNING " +
          kEntryColumns,
      {PgParam::integer(seq), PgParam::integer(now)});
  if (!marked.ok()) return marked.status();
  if (marked->rows() == 0) return std::optional<JournalEntry>();
  JournalEntry entry = entry_at(*marked, 0);
  entry.running = false;
  auto audited = transaction.exec(
      kAuditInsert, audit_params(interrupted_record(entry.intent, from_ns(now)), entry.instance));
  if (!audited.ok()) return audited.status();
  return std::optional<JournalEntry>(std::move(entry));
}

// A reader's failure: none when the tables are not there yet (a database no
// server has used: nothing to list, as a data directory without a journal).
Status read_failure(const PgConnection& connection, const Status& status) {
  return connection.last_sqlstate() == "42P01" ? Status::ok_status() : status;
}

// A statement a tool may not run in a lent transaction: one that starts,
// ends or nests a transaction, which only toolmux does (by its first word).
bool ends_transaction(std::string_view sql) {
  std::size_t at = 0;
  while (at < sql.size() && std::isspace(static_cast<unsigned char>(sql[at]))) ++at;
  std::string word;
  while (at < sql.size() && std::isalpha(static_cast<unsigned char>(sql[at])) && word.size() < 16) {
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[at++])));
  }
  for (const char* refused : {"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT",
                              "RELEASE", "PREPARE"}) {
    if (word == refused) return true;
  }
  return false;
}

// A transaction on a connection of the store's pool, begun by the tool's
// first statement, each statement under a savepoint so that a failed one
// undoes only itself.
class PgLentTransaction final : public LentTransaction {
 public:
  explicit PgLentTransaction(std::shared_ptr<PgStore> postgres) : postgres_(std::move(postgres)) {}
  ~PgLentTransaction() override { PgLentTransaction::roll_back(); }
  PgLentTransaction(const PgLentTransaction&) = delete;
  PgLentTransaction& operator=(const PgLentTransaction&) = delete;

  Result<StoreRows> exec(std::string_view sql,
                         const std::vector<std::optional<std::string>>& params) override {
    std::lock_guard lock(mutex_);
    if (closed_)
      return Status::invalid_argument("the call has ended: its store transaction is closed");
    if (!lost_.empty()) return Status::unavailable(lost_);
    if (ends_transaction(sql)) {
      return Status::invalid_argument(
          "a tool may not begin, end or nest toolmux's transaction: toolmux commits it with the "
          "call's outcome");
    }
    if (!lease_) {
      auto lease = postgres_->pool().acquire();
      if (!lease.ok()) return lease.status();
      if (auto begun = (*lease)->exec("BEGIN"); !begun.ok()) return begun.status();
      lease_ = std::move(lease).value();
    }
    PgConnection& connection = **lease_;
    if (auto saved = connection.exec("SAVEPOINT toolmux_statement"); !saved.ok()) {
      return lose(saved.status());
    }
    std::vector<PgParam> bound;
    bound.reserve(params.size());
    for (const auto& param : params)
      bound.push_back(param ? PgParam::text(*param) : PgParam::null());
    auto ran = connection.exec(sql, bound);
    if (!ran.ok()) {
      if (connection.broken()) return lose(ran.status());
      auto undone = connection.exec("ROLLBACK TO SAVEPOINT toolmux_statement");
      if (!undone.ok()) return lose(undone.status());
      (void)connection.exec("RELEASE SAVEPOINT toolmux_statement");
      return ran.status();
    }
    if (!connection.in_transaction()) {
      lost_ = "a statement of the tool ended toolmux's transaction";
      return Status::invalid_argument(lost_);
    }
    if (auto released = connection.exec("RELEASE SAVEPOINT toolmux_statement"); !released.ok()) {
      return lose(released.status());
    }
    StoreRows rows;
    rows.affected = ran->affected();
    for (int c = 0; c < ran->columns(); ++c) rows.columns.emplace_back(ran->column_name(c));
    rows.rows.reserve(static_cast<std::size_t>(ran->rows()));
    for (int r = 0; r < ran->rows(); ++r) {
      auto& row = rows.rows.emplace_back();
      for (int c = 0; c < ran->columns(); ++c) {
        if (ran->is_null(r, c)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(ran->text(r, c)));
        }
      }
    }
    return rows;
  }

  bool begun() const override {
    std::lock_guard lock(mutex_);
    return lease_.has_value();
  }

  void roll_back() override {
    std::lock_guard lock(mutex_);
    roll_back_locked();
  }

  bool fate_unknown() const override {
    std::lock_guard lock(mutex_);
    return fate_unknown_;
  }

  // Runs `write` (the outcome and the audit record) in the transaction and
  // commits; rolls back when either fails. Closes the transaction.
  Status commit_with(const std::function<Status(PgConnection&)>& write) {
    std::lock_guard lock(mutex_);
    if (closed_) return Status::invalid_argument("the call's store transaction is closed already");
    if (!lease_) return Status::invalid_argument("the tool ran no statement in its transaction");
    if (!lost_.empty()) {
      roll_back_locked();
      return Status::unavailable(lost_);
    }
    if (Status written = write(**lease_); !written.ok()) {
      roll_back_locked();
      return written;
    }
    auto committed = (*lease_)->exec("COMMIT");
    if (!committed.ok() && (*lease_)->broken()) fate_unknown_ = true;
    lease_.reset();  // a broken connection is dropped by the pool
    closed_ = true;
    return committed.ok() ? Status::ok_status() : committed.status();
  }

 private:
  // The transaction cannot commit any more, for `why`.
  Status lose(const Status& why) {
    lost_ = "the tool's store transaction was lost: " + why.message();
    return why;
  }

  void roll_back_locked() {
    closed_ = true;
    if (!lease_) return;
    (void)(*lease_)->exec("ROLLBACK");
    lease_.reset();
  }

  const std::shared_ptr<PgStore> postgres_;  // keeps the pool
  mutable std::mutex mutex_;
  std::optional<PgLease> lease_;  // while begun and open
  bool closed_ = false;
  bool fate_unknown_ = false;
  std::string lost_;  // why it can no longer commit ("" = it can)
};

}  // namespace

PgJournalStore::PgJournalStore(JournalStoreOptions options)
    : options_(std::move(options)), postgres_(options_.postgres), pool_(postgres_->pool()) {
  if (!options_.now) options_.now = std::chrono::system_clock::now;
  instance_ = options_.instance_id.empty() ? random_id(8) : options_.instance_id;
  alive_ = holder_alive(options_.restart_grace);
  entry_columns_ = entry_columns(options_.restart_grace);
}

PgJournalStore::~PgJournalStore() { release(); }

std::int64_t PgJournalStore::now_ns() const { return to_ns(options_.now()); }

Result<std::unique_ptr<PgJournalStore>> PgJournalStore::open(const JournalStoreOptions& options) {
  if (!options.postgres) return Status::invalid_argument("the PostgreSQL journal needs a PgStore");
  std::unique_ptr<PgJournalStore> store(new PgJournalStore(options));
  if (auto held = store->hold(); !held.ok()) return held.status();
  const std::int64_t now = store->now_ns();
  store->last_pass_ns_ = now;
  store->last_retention_ns_ = now;
  auto marked = store->maintain(true);
  if (!marked.ok()) return marked.status();
  store->interrupted_ = std::move(*marked);
  return store;
}

Result<std::int32_t> PgJournalStore::hold() const {
  std::lock_guard<std::mutex> lock(keeper_mutex_);
  if (keeper_ && !(*keeper_)->broken()) return holder_;
  keeper_.reset();  // a broken connection is discarded, not pooled
  auto lease = pool_.acquire();
  if (!lease.ok()) return lease.status();
  const auto take_lock = [&lease](std::int32_t holder) -> Result<bool> {
    auto locked =
        (*lease)->exec("SELECT pg_try_advisory_lock($1::integer, $2::integer)",
                       {PgParam::integer(kPgJournalHolderSpace), PgParam::integer(holder)});
    if (!locked.ok()) return locked.status();
    return locked->text(0, 0) == "t";
  };
  // The number this instance had, when its connection broke (the server
  // restarted, say): its calls that nobody marked interrupted meanwhile go
  // on under it. Only this instance ever takes it.
  if (holder_ != 0) {
    auto again = take_lock(holder_);
    if (!again.ok()) return again.status();
    if (*again) {
      keeper_.emplace(std::move(*lease));
      return holder_;
    }
  }
  auto number = (*lease)->exec("SELECT nextval('toolmux_journal_holders')");
  if (!number.ok()) return number.status();
  const auto holder = static_cast<std::int32_t>(number->integer(0, 0));
  auto locked = take_lock(holder);
  if (!locked.ok()) return locked.status();
  if (!*locked) {
    return Status::io_error("the journal's lock " + std::to_string(holder) +
                            " is held by another session of " + pool_.target());
  }
  keeper_.emplace(std::move(*lease));
  holder_ = holder;
  return holder;
}

void PgJournalStore::release() {
  std::lock_guard<std::mutex> lock(keeper_mutex_);
  if (!keeper_) return;
  // Unlocked before the connection goes back to the pool, where another
  // user would otherwise hold this instance's lock on.
  (void)(*keeper_)->exec("SELECT pg_advisory_unlock($1::integer, $2::integer)",
                         {PgParam::integer(kPgJournalHolderSpace), PgParam::integer(holder_)});
  keeper_.reset();
}

Status PgJournalStore::begin(const JournalIntent& intent) {
  if (intent.call_id.empty()) return Status::invalid_argument("a journal intent needs a call id");
  const std::int64_t started =
      intent.started.time_since_epoch().count() == 0 ? now_ns() : to_ns(intent.started);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto holder = hold();
    if (!holder.ok()) return holder.status();
    auto lease = pool_.acquire();
    if (!lease.ok()) return lease.status();
    // Only while this instance's lock is held (the subquery reads it for
    // the row being inserted, as j): otherwise another instance could mark
    // the call interrupted while it runs.
    auto inserted = (*lease)->exec(
        R"sql(INSERT INTO toolmux_journal (call_id, instance, holder, tool, side_effect,
  arguments_digest, principal, session, approver, rationale, idempotency_key, started_ns)
SELECT $1, $2, $3::integer, $4, $5, $6, $7, $8, $9, $10, $11, $12::bigint
FROM (SELECT $3::integer AS holder) j WHERE )sql" +
            kHolderLocked + " ON CONFLICT DO NOTHING RETURNING seq",
        {text_param(intent.call_id), text_param(instance_), PgParam::integer(*holder),
         text_param(intent.tool), text_param(intent.side_effect),
         text_param(intent.arguments_digest), text_param(intent.principal),
         text_param(intent.session), text_param(intent.approver), text_param(intent.rationale),
         intent.idempotency_key.empty() ? PgParam::null() : text_param(intent.idempotency_key),
         PgParam::integer(started)});
    if (!inserted.ok()) return inserted.status();
    if (inserted->rows() == 1) return Status::ok_status();
    auto taken = (*lease)->exec(
        "SELECT EXISTS (SELECT 1 FROM toolmux_journal WHERE call_id = $1 AND (outcome IS NULL "
        "OR outcome IN ('ok', 'tool_error'))), EXISTS (SELECT 1 FROM toolmux_journal WHERE "
        "principal = $2 AND idempotency_key = $3 AND (outcome IS NULL OR outcome IN ('ok', "
        "'tool_error')))",
        {text_param(intent.call_id), text_param(intent.principal),
         text_param(intent.idempotency_key)});
    if (!taken.ok()) return taken.status();
    if (taken->text(0, 0) == "t") {
      return Status::invalid_argument("call " + intent.call_id + " is already in the journal");
    }
    if (!intent.idempotency_key.empty() && taken->text(0, 1) == "t") {
      return Status::invalid_argument("the idempotency key \"" + intent.idempotency_key +
                                      "\" is already used by another call of this principal");
    }
    release();  // the lock is gone: a new one, on a new connection
  }
  return Status::unavailable("could not hold this instance's journal lock in the store (" +
                             pool_.target() + ")");
}

Status PgJournalStore::finish(const std::string& call_id, const std::string& outcome,
                              const nlohmann::json& result, const AuditRecord& audit) {
  maybe_maintain();
  auto lease = pool_.acquire();
  if (!lease.ok()) return lease.status();
  return finish_on(**lease, call_id, outcome, result, audit);
}

std::shared_ptr<LentTransaction> PgJournalStore::lend_transaction() {
  return std::make_shared<PgLentTransaction>(postgres_);
}

Status PgJournalStore::finish_in(LentTransaction& transaction, const std::string& call_id,
                                 const std::string& outcome, const nlohmann::json& result,
                                 const AuditRecord& audit) {
  auto* lent = dynamic_cast<PgLentTransaction*>(&transaction);
  if (!lent || !lent->begun()) {
    transaction.roll_back();
    return finish(call_id, outcome, result, audit);
  }
  maybe_maintain();
  return lent->commit_with([&](PgConnection& connection) {
    return finish_on(connection, call_id, outcome, result, audit);
  });
}

Status PgJournalStore::finish_on(PgConnection& connection, const std::string& call_id,
                                 const std::string& outcome, const nlohmann::json& result,
                                 const AuditRecord& audit) {
  const std::int64_t now = now_ns();
  std::string result_text;
  bool too_large = false;
  if (!result.is_null()) {
    result_text = journal_json_text(result);
    if (result_text.size() > kMaxReplayResultBytes) {
      too_large = true;
      result_text.clear();
    }
  }
  AuditRecord record = audit;
  if (record.call_id.empty()) record.call_id = call_id;
  if (record.time.time_since_epoch().count() == 0) record.time = from_ns(now);
  std::vector<PgParam> params = audit_params(record, instance_);
  params.push_back(text_param(call_id));
  params.push_back(text_param(outcome));
  params.push_back(PgParam::integer(now));
  params.push_back(result_text.empty() ? PgParam::null() : PgParam::text(result_text));
  params.push_back(PgParam::text(too_large ? "true" : "false"));
  // One statement: the outcome and the audit record commit together. The
  // last SELECT sees the entry as it was before this statement.
  auto done = connection.exec(
      R"sql(WITH target AS (
  SELECT seq FROM toolmux_journal WHERE call_id = $16 ORDER BY seq DESC LIMIT 1
), done AS (
  UPDATE toolmux_journal j
  SET outcome = $17, ended_ns = $18, result = $19, result_too_large = $20::boolean
  FROM target WHERE j.seq = target.seq AND (j.outcome = 'interrupted' OR (j.outcome IS NULL
    AND (j.instance = $2 OR NOT )sql" +
          kHolderLocked + R"sql())) RETURNING j.seq
), audited AS (
  INSERT INTO toolmux_audit (time_ns, instance, call_id, principal, session, tool, side_effect,
    arguments, confirmation, approver, rationale, outcome, duration_ms, idempotency_key, defaults)
  SELECT $1::bigint, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::double precision, $14,
    $15
  FROM done
)
SELECT (SELECT count(*) FROM done), (SELECT count(*) FROM target),
  (SELECT outcome FROM toolmux_journal WHERE seq = (SELECT seq FROM target)))sql",
      params);
  if (!done.ok()) return done.status();
  if (done->integer(0, 0) == 1) return Status::ok_status();
  if (done->integer(0, 1) == 0) {
    return Status::not_found("call " + call_id + " has no intent in the journal");
  }
  std::string had(done->text(0, 2));
  if (had.empty()) {  // marked meanwhile, by another statement
    auto now_has = connection.exec(
        "SELECT outcome FROM toolmux_journal WHERE call_id = $1 ORDER BY seq DESC LIMIT 1",
        {text_param(call_id)});
    if (now_has.ok() && now_has->rows() == 1) had = now_has->text(0, 0);
  }
  if (had.empty()) {
    // Its newest entry is a run of another live instance: asked for again
    // after this one was taken for dead.
    return Status::invalid_argument("call " + call_id +
                                    " is running again, through another instance");
  }
  return Status::invalid_argument("call " + call_id + " already has an outcome (" + had + ")");
}

Status PgJournalStore::keep_alive() {
  {
    std::lock_guard<std::mutex> lock(keeper_mutex_);
    if (keeper_ && !(*keeper_)->broken() && (*keeper_)->exec("SELECT 1").ok()) {
      return Status::ok_status();
    }
  }
  // The kept connection is gone (the server restarted, say): the lock with
  // it, taken again on a new one.
  auto held = hold();
  return held.ok() ? Status::ok_status() : held.status();
}

Status PgJournalStore::audit(const AuditRecord& record) {
  maybe_maintain();
  AuditRecord copy = record;
  if (copy.time.time_since_epoch().count() == 0) copy.time = options_.now();
  auto lease = pool_.acquire();
  if (!lease.ok()) return lease.status();
  auto inserted = (*lease)->exec(kAuditInsert, audit_params(copy, instance_));
  return inserted.ok() ? Status::ok_status() : inserted.status();
}

std::optional<JournalEntry> PgJournalStore::find_by_key(const std::string& principal,
                                                        const std::string& key) const {
  if (key.empty()) return std::nullopt;
  auto lease = pool_.acquire();
  if (!lease.ok()) return std::nullopt;
  const std::string select = "SELECT " + entry_columns_ +
                             ", j.result FROM toolmux_journal j WHERE j.principal = $1 AND "
                             "j.idempotency_key = $2 ORDER BY j.seq DESC LIMIT 1";
  const std::vector<PgParam> params{text_param(principal), text_param(key)};
  auto rows = (*lease)->exec(select, params);
  if (!rows.ok() || rows->rows() == 0) return std::nullopt;
  JournalEntry entry = entry_at(*rows, 0);
  if (!entry.outcome && !entry.running && entry.instance == instance_ && hold().ok()) {
    // This instance's own call, from before its lock was taken again.
    rows = (*lease)->exec(select, params);
    if (!rows.ok() || rows->rows() == 0) return std::nullopt;
    entry = entry_at(*rows, 0);
  }
  if (!entry.outcome && !entry.running) {
    // Its instance is gone: the call died with it.
    auto transaction = PgTransaction::begin(**lease);
    if (!transaction.ok()) return std::nullopt;
    auto marked = mark_interrupted(*transaction, rows->integer(0, 0), now_ns());
    if (!marked.ok() || !transaction->commit().ok()) return std::nullopt;
    if (*marked) return std::move(**marked);
    rows = (*lease)->exec(select, params);  // it ended meanwhile
    if (!rows.ok() || rows->rows() == 0) return std::nullopt;
    entry = entry_at(*rows, 0);
  }
  entry.running = false;  // read_journal's alone
  if (entry.outcome && !entry.result_too_large && !rows->is_null(0, 16)) {
    const std::string_view text = rows->text(0, 16);
    json result = json::parse(text.begin(), text.end(), nullptr, false);
    if (!result.is_discarded()) entry.result = std::move(result);
  }
  return entry;
}

std::vector<AuditRecord> PgJournalStore::latest_audit(std::size_t limit) const {
  std::vector<AuditRecord> out;
  if (limit == 0) return out;
  auto lease = pool_.acquire();
  if (!lease.ok()) return out;
  auto rows = (*lease)->exec(std::string("SELECT ") + kAuditColumns +
                                 " FROM toolmux_audit ORDER BY time_ns DESC, seq DESC LIMIT $1",
                             {PgParam::integer(static_cast<std::int64_t>(limit))});
  if (!rows.ok()) return out;
  for (int row = 0; row < rows->rows(); ++row) out.push_back(record_at(*rows, row));
  return out;
}

void PgJournalStore::maybe_maintain() {
  const std::int64_t now = now_ns();
  std::int64_t last_retention = last_retention_ns_.load();
  if (now - last_retention >= kRetentionEveryNs &&
      last_retention_ns_.compare_exchange_strong(last_retention, now)) {
    last_pass_ns_ = now;
    (void)maintain(true);  // best effort: what fails now goes at the next pass
    return;
  }
  const std::int64_t interval = std::chrono::nanoseconds(options_.maintenance_interval).count();
  std::int64_t last_pass = last_pass_ns_.load();
  if (now - last_pass >= interval && last_pass_ns_.compare_exchange_strong(last_pass, now)) {
    (void)maintain(false);
  }
}

Result<std::vector<JournalEntry>> PgJournalStore::maintain(bool retention) {
  // This instance's lock first (taken again if its connection broke), so
  // that its own running calls are not taken for a dead instance's.
  if (auto held = hold(); !held.ok()) return held.status();
  std::vector<JournalEntry> marked;
  auto lease = pool_.acquire();
  if (!lease.ok()) return lease.status();
  auto transaction = PgTransaction::begin(**lease);
  if (!transaction.ok()) return transaction.status();
  auto mine = try_advisory_xact_lock(*transaction, kPgLockJournalMaintenance);
  if (!mine.ok()) return mine.status();
  if (!*mine) return marked;  // another instance is at it
  const std::int64_t now = now_ns();
  for (;;) {
    auto dead =
        transaction->exec("SELECT j.seq FROM toolmux_journal j WHERE j.outcome IS NULL AND NOT " +
                          alive_ + " ORDER BY j.seq LIMIT 1024");
    if (!dead.ok()) return dead.status();
    for (int row = 0; row < dead->rows(); ++row) {
      auto entry = mark_interrupted(*transaction, dead->integer(row, 0), now);
      if (!entry.ok()) return entry.status();
      if (*entry && marked.size() < kMaxInterruptedListed) marked.push_back(std::move(**entry));
    }
    if (dead->rows() < 1024) break;
  }
  if (retention) {
    const std::int64_t cutoff = now - retention_ns(options_.audit_retention);
    // The audit table refuses deletes but retention's (migration 10). In a
    // savepoint: where the operator gave retention a role of its own and this
    // login may not delete (docs/shared-store.md), the rest still commits.
    auto saved = transaction->exec("SAVEPOINT audit_retention");
    if (!saved.ok()) return saved.status();
    auto allowed = transaction->exec("SET LOCAL toolmux.retention = on");
    if (!allowed.ok()) return allowed.status();
    auto records = transaction->exec("DELETE FROM toolmux_audit WHERE time_ns < $1",
                                     {PgParam::integer(cutoff)});
    auto ended = transaction->exec(records.ok() ? "RELEASE SAVEPOINT audit_retention"
                                                : "ROLLBACK TO SAVEPOINT audit_retention");
    if (!ended.ok()) return ended.status();
    auto reset = transaction->exec("SET LOCAL toolmux.retention = off");
    if (!reset.ok()) return reset.status();
    auto entries =
        transaction->exec("DELETE FROM toolmux_journal WHERE outcome IS NOT NULL AND ended_ns < $1",
                          {PgParam::integer(cutoff)});
    if (!entries.ok()) return entries.status();
  }
  if (Status committed = transaction->commit(); !committed.ok()) return committed;
  return marked;
}

// ---- Readers ----

Status for_each_journal_entry(PgPool& pool, const JournalEntryFn& fn) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  // Keyset pages by (start, seq): each page a statement of its own.
  std::int64_t after_started = std::numeric_limits<std::int64_t>::min();
  std::int64_t after_seq = -1;
  for (;;) {
    auto rows = (*lease)->exec("SELECT " + kEntryColumns +
                                   " FROM toolmux_journal j WHERE (j.started_ns, j.seq) > "
                                   "($1::bigint, $2::bigint) ORDER BY j.started_ns, j.seq LIMIT $3",
                               {PgParam::integer(after_started), PgParam::integer(after_seq),
                                PgParam::integer(kPageRows)});
    if (!rows.ok()) return read_failure(**lease, rows.status());
    for (int row = 0; row < rows->rows(); ++row) {
      if (!fn(entry_at(*rows, row))) return Status::ok_status();
    }
    if (rows->rows() < kPageRows) return Status::ok_status();
    after_started = rows->integer(rows->rows() - 1, 11);
    after_seq = rows->integer(rows->rows() - 1, 0);
  }
}

Status for_each_audit_record(PgPool& pool, const AuditQuery& query, const AuditRecordFn& fn) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  const std::string filters =
      "time_ns >= $1 AND ($2 = '' OR tool = $2) AND ($3 = '' OR principal = $3)";
  std::vector<PgParam> params{
      PgParam::integer(query.since ? to_ns(*query.since)
                                   : std::numeric_limits<std::int64_t>::min()),
      text_param(query.tool), text_param(query.principal)};
  if (query.limit > 0) {
    // The newest `limit`, handed over oldest first.
    params.push_back(PgParam::integer(static_cast<std::int64_t>(query.limit)));
    auto rows =
        (*lease)->exec(std::string("SELECT ") + kAuditColumns + " FROM toolmux_audit WHERE " +
                           filters + " ORDER BY time_ns DESC, seq DESC LIMIT $4",
                       params);
    if (!rows.ok()) return read_failure(**lease, rows.status());
    for (int row = rows->rows() - 1; row >= 0; --row) {
      if (!fn(record_at(*rows, row))) break;
    }
    return Status::ok_status();
  }
  std::int64_t after_time = std::numeric_limits<std::int64_t>::min();
  std::int64_t after_seq = -1;
  params.push_back(PgParam::integer(kPageRows));
  params.push_back(PgParam::null());
  params.push_back(PgParam::null());
  for (;;) {
    params[4] = PgParam::integer(after_time);
    params[5] = PgParam::integer(after_seq);
    auto rows = (*lease)->exec(
        std::string("SELECT ") + kAuditColumns + " FROM toolmux_audit WHERE " + filters +
            " AND (time_ns, seq) > ($5::bigint, $6::bigint) ORDER BY time_ns, seq LIMIT $4",
        params);
    if (!rows.ok()) return read_failure(**lease, rows.status());
    for (int row = 0; row < rows->rows(); ++row) {
      if (!fn(record_at(*rows, row))) return Status::ok_status();
    }
    if (rows->rows() < kPageRows) return Status::ok_status();
    after_time = rows->integer(rows->rows() - 1, 0);
    after_seq = rows->integer(rows->rows() - 1, 14);
  }
}

Result<PgAuditGuard> pg_audit_guard(PgPool& pool) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  auto rows = (*lease)->exec(
      "SELECT (SELECT count(*) FROM toolmux_audit), current_user, "
      "EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'toolmux_audit'::regclass AND tgname = "
      "'toolmux_audit_append_only' AND tgenabled <> 'D'), "
      "has_table_privilege('toolmux_audit', 'UPDATE') OR "
      "has_table_privilege('toolmux_audit', 'DELETE')");
  if (!rows.ok()) return read_failure(**lease, rows.status());
  PgAuditGuard guard;
  guard.records = static_cast<std::uint64_t>(rows->integer(0, 0));
  guard.role = rows->text(0, 1);
  guard.trigger = rows->text(0, 2) == "t";
  guard.role_may_change = rows->text(0, 3) == "t";
  return guard;
}

Result<std::vector<JournalEntry>> read_journal(PgPool& pool) {
  return collect_all<JournalEntry>(
      [&pool](const JournalEntryFn& fn) { return for_each_journal_entry(pool, fn); });
}

Result<std::vector<AuditRecord>> read_audit(PgPool& pool, const AuditQuery& query) {
  return collect_all<AuditRecord>(
      [&](const AuditRecordFn& fn) { return for_each_audit_record(pool, query, fn); });
}

}  // namespace toolmux
