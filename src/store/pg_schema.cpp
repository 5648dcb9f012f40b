#include "src/store/pg_schema.h"

#include <string>

namespace toolmux {

namespace {

// Version 1: offloaded results (text in chunks, each with its first
// character's offset, so that a page reads only the chunks it covers) and
// the key that seals requestState.
const PgMigration kResultsAndStateKey{
    1,
    {
        R"sql(CREATE TABLE toolmux_results (
  id text PRIMARY KEY,
  owner text NOT NULL,
  created_ns bigint NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  bytes bigint NOT NULL,
  chars bigint NOT NULL,
  mime_type text NOT NULL,
  base64 boolean NOT NULL
))sql",
        "CREATE INDEX toolmux_results_by_owner ON toolmux_results (owner, created_ns, seq)",
        "CREATE INDEX toolmux_results_by_age ON toolmux_results (created_ns, seq)",
        R"sql(CREATE TABLE toolmux_result_chunks (
  result_id text NOT NULL REFERENCES toolmux_results (id) ON DELETE CASCADE,
  first_char bigint NOT NULL,
  chars bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (result_id, first_char)
))sql",
        R"sql(CREATE TABLE toolmux_state_key (
  name text PRIMARY KEY,
  key bytea NOT NULL CHECK (length(key) = 32)
))sql",
    }};

// Version 2: the run-time write freeze of a deployment (pg_write_freeze.h):
// at most one row, there while the freeze is on.
const PgMigration kWriteFreeze{2,
                               {
                                   R"sql(CREATE TABLE toolmux_write_freeze (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  reason text NOT NULL,
  since_ns bigint NOT NULL
))sql",
                               }};

// Version 3: legacy HTTP sessions and the SSE events sent to them
// (pg_session_store.h): a session's row numbers its events (last_seq) for
// every instance.
const PgMigration kSessions{
    3,
    {
        R"sql(CREATE TABLE toolmux_sessions (
  id text PRIMARY KEY,
  record text NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  touched_ns bigint NOT NULL
))sql",
        "CREATE INDEX toolmux_sessions_by_touch ON toolmux_sessions (touched_ns)",
        R"sql(CREATE TABLE toolmux_session_events (
  session_id text NOT NULL REFERENCES toolmux_sessions (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  stream bigint NOT NULL,
  data text NOT NULL,
  final boolean NOT NULL,
  PRIMARY KEY (session_id, seq)
))sql",
        R"sql(CREATE INDEX toolmux_session_events_by_stream ON toolmux_session_events (session_id, stream, seq))sql",
    }};

// Version 4: the last tool list of each upstream, by name (pg_tool_lists.h).
const PgMigration kToolLists{4,
                             {
                                 R"sql(CREATE TABLE toolmux_tool_lists (
  upstream text PRIMARY KEY,
  tools text NOT NULL,
  listed_ns bigint NOT NULL
))sql",
                             }};

// Version 5: the journal of mutations and the audit trail
// (pg_journal_store.h). An entry's holder is the number of the advisory lock
// its instance held when it began (toolmux_journal_holders gives each
// instance's connection a new one); the partial unique indexes are the
// replay index: one live entry (no outcome yet, or finished) per call id and
// per (principal, idempotency key).
const PgMigration kJournalAndAudit{
    5,
    {
        "CREATE SEQUENCE toolmux_journal_holders AS integer MINVALUE 1 CYCLE",
        R"sql(CREATE TABLE toolmux_journal (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  call_id text NOT NULL,
  instance text NOT NULL,
  holder integer NOT NULL,
  tool text NOT NULL,
  side_effect text NOT NULL,
  arguments_digest text NOT NULL,
  principal text NOT NULL,
  session text NOT NULL,
  approver text NOT NULL,
  rationale text NOT NULL,
  idempotency_key text,
  started_ns bigint NOT NULL,
  outcome text,
  ended_ns bigint,
  result text,
  result_too_large boolean NOT NULL DEFAULT false
))sql",
        R"sql(CREATE UNIQUE INDEX toolmux_journal_live_call ON toolmux_journal (call_id)
  WHERE outcome IS NULL OR outcome IN ('ok', 'tool_error'))sql",
        R"sql(CREATE UNIQUE INDEX toolmux_journal_live_key ON toolmux_journal (principal, idempotency_key)
  WHERE idempotency_key IS NOT NULL AND (outcome IS NULL OR outcome IN ('ok', 'tool_error')))sql",
        "CREATE INDEX toolmux_journal_by_call ON toolmux_journal (call_id, seq)",
        R"sql(CREATE INDEX toolmux_journal_by_key ON toolmux_journal (principal, idempotency_key, seq)
  WHERE idempotency_key IS NOT NULL)sql",
        "CREATE INDEX toolmux_journal_by_start ON toolmux_journal (started_ns, seq)",
        "CREATE INDEX toolmux_journal_pending ON toolmux_journal (holder) WHERE outcome IS NULL",
        R"sql(CREATE INDEX toolmux_journal_by_end ON toolmux_journal (ended_ns)
  WHERE outcome IS NOT NULL)sql",
        R"sql(CREATE TABLE toolmux_audit (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  time_ns bigint NOT NULL,
  instance text NOT NULL,
  call_id text NOT NULL,
  principal text NOT NULL,
  session text NOT NULL,
  tool text NOT NULL,
  side_effect text NOT NULL,
  arguments text NOT NULL,
  confirmation text NOT NULL,
  approver text NOT NULL,
  rationale text NOT NULL,
  outcome text NOT NULL,
  duration_ms double precision NOT NULL,
  idempotency_key text NOT NULL
))sql",
        "CREATE INDEX toolmux_audit_by_time ON toolmux_audit (time_ns, seq)",
    }};

// Version 6: tool_search's memory of use, shared by the instances
// (pg_search_memory.h): per (query term, tool) a count as of `stamp`
// (seconds since the epoch), and the revision of its last change, taken from
// the sequence under kPgLockSearchMemoryWrites, so that an instance reads
// what changed since it last looked.
const PgMigration kSearchMemory{6,
                                {
                                    "CREATE SEQUENCE toolmux_search_memory_revisions",
                                    R"sql(CREATE TABLE toolmux_search_memory (
  term text NOT NULL,
  tool text NOT NULL,
  count double precision NOT NULL,
  stamp bigint NOT NULL,
  revision bigint NOT NULL,
  PRIMARY KEY (term, tool)
))sql",
                                    R"sql(CREATE INDEX toolmux_search_memory_by_revision
  ON toolmux_search_memory (revision))sql",
                                }};

// Version 7: the spent tokens of confirmations (pg_spent_tokens.h): one row
// per answer that let a confirmed call run, until it expires, so that no
// instance runs the call again for the same answer.
const PgMigration kSpentTokens{7,
                               {
                                   R"sql(CREATE TABLE toolmux_spent_tokens (
  token text PRIMARY KEY,
  expires_ns bigint NOT NULL
))sql",
                                   R"sql(CREATE INDEX toolmux_spent_tokens_by_expiry
  ON toolmux_spent_tokens (expires_ns))sql",
                               }};

// Version 8: the logins `toolmux login` keeps for upstreams (upstream_logins.h):
// one row per upstream name, its client and tokens as JSON text.
const PgMigration kUpstreamLogins{8,
                                  {
                                      R"sql(CREATE TABLE toolmux_upstream_logins (
  upstream text PRIMARY KEY,
  login text NOT NULL,
  written_ns bigint NOT NULL
))sql",
                                  }};

// Version 9: an audit record's arguments that the tool's schema defaults
// filled in (AuditRecord::defaults), as JSON text; '' = none.
const PgMigration kAuditDefaults{
    9,
    {
        "ALTER TABLE toolmux_audit ADD COLUMN defaults text NOT NULL DEFAULT ''",
    }};

// Version 10: the audit trail is append-only (issue 31). A trigger refuses
// every UPDATE and TRUNCATE of toolmux_audit, and every DELETE but
// retention's, which sets toolmux.retention to on for its transaction only
// (SET LOCAL, pg_journal_store.cpp). The setting keeps toolmux's own code and
// a mistaken statement out; a role that may not UPDATE or DELETE the table is
// the boundary against a login that means harm (docs/shared-store.md).
const PgMigration kAuditAppendOnly{
    10,
    {
        R"sql(CREATE FUNCTION toolmux_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('toolmux.retention', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'toolmux_audit is append-only: % refused (only toolmux''s retention deletes, and only old records)', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$)sql",
        R"sql(CREATE TRIGGER toolmux_audit_append_only BEFORE UPDATE OR DELETE ON toolmux_audit
  FOR EACH ROW EXECUTE FUNCTION toolmux_audit_append_only())sql",
        R"sql(CREATE TRIGGER toolmux_audit_no_truncate BEFORE TRUNCATE ON toolmux_audit
  FOR EACH STATEMENT EXECUTE FUNCTION toolmux_audit_append_only())sql",
    }};

// Version 11: tasks (the io.modelcontextprotocol/tasks extension, issue 32),
// one row each, its record as text (task_store.h), gone at expires_ms.
const PgMigration kTasks{
    11,
    {
        R"sql(CREATE TABLE toolmux_tasks (
  id text PRIMARY KEY,
  owner text NOT NULL,
  expires_ms bigint NOT NULL,
  record text NOT NULL))sql",
        R"sql(CREATE INDEX toolmux_tasks_by_expiry ON toolmux_tasks (expires_ms))sql",
    }};

}  // namespace

const std::vector<PgMigration>& pg_migrations() {
  // Append only; see pg_schema.h.
  static const std::vector<PgMigration> migrations{
      kResultsAndStateKey, kWriteFreeze,     kSessions,    kToolLists,
      kJournalAndAudit,    kSearchMemory,    kSpentTokens, kUpstreamLogins,
      kAuditDefaults,      kAuditAppendOnly, kTasks};
  return migrations;
}

std::string pg_restore_prerequisites() {
  std::string sql(kAuditAppendOnly.statements.front());
  const std::string_view create = "CREATE FUNCTION";
  sql.replace(0, create.size(), "CREATE OR REPLACE FUNCTION");
  return sql + ";\n";
}

Status newer_schema(int found, int known) {
  return Status::invalid_argument("the store's schema is version " + std::to_string(found) +
                                  "; this toolmux knows up to " + std::to_string(known) +
                                  ": upgrade toolmux");
}

Result<int> migrate_pg_schema(PgConnection& connection,
                              const std::vector<PgMigration>& migrations) {
  auto transaction = PgTransaction::begin(connection);
  if (!transaction.ok()) return transaction.status();
  auto locked =
      transaction->exec("SELECT pg_advisory_xact_lock($1)", {PgParam::integer(kPgLockMigrations)});
  if (!locked.ok()) return locked.status();
  auto made = transaction->exec(
      "CREATE TABLE IF NOT EXISTS toolmux_schema (version integer PRIMARY KEY, applied_at "
      "timestamptz NOT NULL DEFAULT now())");
  if (!made.ok()) return made.status();
  auto current = transaction->exec("SELECT coalesce(max(version), 0) FROM toolmux_schema");
  if (!current.ok()) return current.status();
  int version = static_cast<int>(current->integer(0, 0));
  const int known = migrations.empty() ? 0 : migrations.back().version;
  if (version > known) return newer_schema(version, known);
  for (const PgMigration& migration : migrations) {
    if (migration.version <= version) continue;
    for (std::string_view statement : migration.statements) {
      auto done = transaction->exec(statement);
      if (!done.ok()) {
        return Status(done.status().code() == Status::Code::kUnavailable
                          ? done.status()
                          : Status::io_error("migration " + std::to_string(migration.version) +
                                             " of the store's schema failed: " + done.message()));
      }
    }
    auto noted = transaction->exec("INSERT INTO toolmux_schema (version) VALUES ($1)",
                                   {PgParam::integer(migration.version)});
    if (!noted.ok()) return noted.status();
    version = migration.version;
  }
  Status committed = transaction->commit();
  if (!committed.ok()) return committed;
  return version;
}

Result<bool> try_advisory_xact_lock(PgTransaction& transaction, std::int64_t key) {
  auto got = transaction.exec("SELECT pg_try_advisory_xact_lock($1)", {PgParam::integer(key)});
  if (!got.ok()) return got.status();
  return got->text(0, 0) == "t";
}

Result<std::optional<PgExclusiveLock>> PgExclusiveLock::try_take(PgPool& pool, std::int64_t key) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  auto got = (*lease)->exec("SELECT pg_try_advisory_lock($1)", {PgParam::integer(key)});
  if (!got.ok()) return got.status();
  if (got->text(0, 0) != "t") return std::optional<PgExclusiveLock>();
  return std::optional<PgExclusiveLock>(PgExclusiveLock(std::move(*lease), key));
}

PgExclusiveLock::PgExclusiveLock(PgExclusiveLock&& other) noexcept
    : lease_(std::move(other.lease_)), key_(other.key_), held_(std::exchange(other.held_, false)) {}

PgExclusiveLock::~PgExclusiveLock() {
  if (held_) (void)lease_->exec("SELECT pg_advisory_unlock($1)", {PgParam::integer(key_)});
}

}  // namespace toolmux
