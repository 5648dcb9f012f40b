#include "src/store/pg_session_store.h"

#include <utility>

#include "src/store/cluster_bus.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_schema.h"

namespace toolmux {

namespace {

using nlohmann::json;

// The most events one read gives: the transport keeps no more per session.
constexpr int kMaxEventsRead = 4096;

// A session's events from a seq on, at most kMaxEventsRead.
constexpr std::string_view kEventsAfter =
    "SELECT seq, stream, data, final FROM toolmux_session_events "
    "WHERE session_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT 4096";
constexpr std::string_view kStreamEventsAfter =
    "SELECT seq, stream, data, final FROM toolmux_session_events "
    "WHERE session_id = $1 AND stream = $3::bigint AND seq > $2::bigint ORDER BY seq LIMIT 4096";

PgParam seq_param(std::uint64_t n) { return PgParam::integer(static_cast<std::int64_t>(n)); }

}  // namespace

Result<std::unique_ptr<PgSessionStore>> PgSessionStore::open(std::shared_ptr<PgStore> store,
                                                             Logger& logger) {
  {
    auto lease = store->pool().acquire();
    if (!lease.ok()) return lease.status();
  }
  return std::unique_ptr<PgSessionStore>(new PgSessionStore(std::move(store), logger));
}

std::string PgSessionStore::where() const { return "PostgreSQL at " + store_->target(); }

std::int64_t PgSessionStore::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now().time_since_epoch()).count();
}

void PgSessionStore::failed(const char* what, const Status& status) const {
  // The first few, then one in 100: an outage must not flood the log.
  const std::uint64_t n = ++failures_;
  if (n <= 3 || n % 100 == 0) {
    logger_.write(LogLevel::warning, "session_store_failed",
                  {{"what", what}, {"reason", status.message()}, {"failures", n}});
  }
}

Status PgSessionStore::put_session(std::string_view id, const json& record) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) {
    failed("put_session", lease.status());
    return lease.status();
  }
  auto put = (*lease)->exec(
      "INSERT INTO toolmux_sessions (id, record, touched_ns) VALUES ($1, $2, $3) "
      "ON CONFLICT (id) DO UPDATE SET record = EXCLUDED.record, touched_ns = EXCLUDED.touched_ns",
      {PgParam::text(id), PgParam::text(record.dump()), PgParam::integer(now_ns())});
  if (!put.ok()) {
    failed("put_session", put.status());
    return put.status();
  }
  return Status::ok_status();
}

void PgSessionStore::delete_session(std::string_view id) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return failed("delete_session", lease.status());
  // Its events go with it (ON DELETE CASCADE).
  auto removed = (*lease)->exec("DELETE FROM toolmux_sessions WHERE id = $1", {PgParam::text(id)});
  if (!removed.ok()) failed("delete_session", removed.status());
}

std::vector<std::pair<std::string, json>> PgSessionStore::load_sessions() const {
  return {};  // loaded one at a time, when a request names one
}

Result<std::optional<json>> PgSessionStore::load_session(std::string_view id) const {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return lease.status();
  auto row =
      (*lease)->exec("SELECT record FROM toolmux_sessions WHERE id = $1", {PgParam::text(id)});
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return std::optional<json>();
  json record = json::parse(row->text(0, 0), nullptr, false);
  if (!record.is_object()) return std::optional<json>();
  return std::optional<json>(std::move(record));
}

void PgSessionStore::touch_session(std::string_view id) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return failed("touch_session", lease.status());
  auto touched = (*lease)->exec("UPDATE toolmux_sessions SET touched_ns = $2 WHERE id = $1",
                                {PgParam::text(id), PgParam::integer(now_ns())});
  if (!touched.ok()) failed("touch_session", touched.status());
}

std::vector<std::string> PgSessionStore::expire_sessions(std::chrono::seconds idle) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) {
    failed("expire_sessions", lease.status());
    return {};
  }
  auto transaction = PgTransaction::begin(**lease);
  if (!transaction.ok()) return {};
  // One instance at a time; the others find nothing left to do.
  auto locked = try_advisory_xact_lock(*transaction, kPgLockSessionExpiry);
  if (!locked.ok() || !*locked) return {};
  const std::int64_t cutoff =
      now_ns() - std::chrono::duration_cast<std::chrono::nanoseconds>(idle).count();
  auto removed =
      transaction->exec("DELETE FROM toolmux_sessions WHERE touched_ns < $1 RETURNING id",
                        {PgParam::integer(cutoff)});
  if (!removed.ok()) {
    failed("expire_sessions", removed.status());
    return {};
  }
  std::vector<std::string> ids;
  ids.reserve(static_cast<std::size_t>(removed->rows()));
  for (int i = 0; i < removed->rows(); ++i) ids.emplace_back(removed->text(i, 0));
  if (const Status committed = transaction->commit(); !committed.ok()) {
    failed("expire_sessions", committed);
    return {};
  }
  return ids;
}

std::uint64_t PgSessionStore::next_seq(std::string_view session) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) {
    failed("next_seq", lease.status());
    return 0;
  }
  auto row = (*lease)->exec(
      "UPDATE toolmux_sessions SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq",
      {PgParam::text(session)});
  if (!row.ok()) {
    failed("next_seq", row.status());
    return 0;
  }
  return row->rows() == 0 ? 0 : static_cast<std::uint64_t>(row->integer(0, 0));
}

void PgSessionStore::append_event(std::string_view session, const StoredEvent& event) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return failed("append_event", lease.status());
  // A session deleted meanwhile takes no events (its row is gone: nothing
  // is inserted); a seq written twice keeps the first.
  static constexpr std::string_view kInsert =
      "INSERT INTO toolmux_session_events (session_id, seq, stream, data, final) "
      "SELECT $1, $2::bigint, $3::bigint, $4, $5::boolean "
      "WHERE EXISTS (SELECT 1 FROM toolmux_sessions WHERE id = $1) "
      "ON CONFLICT (session_id, seq) DO NOTHING";
  std::vector<PgParam> params{PgParam::text(session), seq_param(event.seq), seq_param(event.stream),
                              PgParam::text(event.data),
                              PgParam::text(event.final ? "true" : "false")};
  std::string sql(kInsert);
  if (!notice_from_.empty()) {
    // The notification goes out when the row is committed, and only if one was.
    auto notice = cluster_event_payload(notice_from_, "session_events",
                                        {{"session", session_id_digest(session)}});
    if (notice.ok()) {
      sql = "WITH stored AS (" + sql + " RETURNING 1) SELECT pg_notify($6, $7) FROM stored";
      params.push_back(PgParam::text(kClusterChannel));
      params.push_back(PgParam::text(*notice));
    }
  }
  auto written = (*lease)->exec(sql, params);
  if (!written.ok()) failed("append_event", written.status());
}

std::vector<StoredEvent> PgSessionStore::read_events(std::string_view sql,
                                                     const std::vector<PgParam>& params) const {
  std::vector<StoredEvent> events;
  auto lease = store_->pool().acquire();
  if (!lease.ok()) {
    failed("events_after", lease.status());
    return events;
  }
  auto rows = (*lease)->exec(sql, params);
  if (!rows.ok()) {
    failed("events_after", rows.status());
    return events;
  }
  events.reserve(static_cast<std::size_t>(std::min(rows->rows(), kMaxEventsRead)));
  for (int i = 0; i < rows->rows(); ++i) {
    events.push_back({static_cast<std::uint64_t>(rows->integer(i, 0)),
                      static_cast<std::uint64_t>(rows->integer(i, 1)),
                      std::string(rows->text(i, 2)), rows->text(i, 3) == "t"});
  }
  return events;
}

std::vector<StoredEvent> PgSessionStore::events_after(std::string_view session,
                                                      std::uint64_t after_seq) const {
  return read_events(kEventsAfter, {PgParam::text(session), seq_param(after_seq)});
}

std::vector<StoredEvent> PgSessionStore::stream_events_after(std::string_view session,
                                                             std::uint64_t stream,
                                                             std::uint64_t after_seq) const {
  return read_events(kStreamEventsAfter,
                     {PgParam::text(session), seq_param(after_seq), seq_param(stream)});
}

std::uint64_t PgSessionStore::last_seq(std::string_view session) const {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) {
    failed("last_seq", lease.status());
    return 0;
  }
  auto row = (*lease)->exec("SELECT last_seq FROM toolmux_sessions WHERE id = $1",
                            {PgParam::text(session)});
  if (!row.ok()) {
    failed("last_seq", row.status());
    return 0;
  }
  return row->rows() == 0 ? 0 : static_cast<std::uint64_t>(row->integer(0, 0));
}

void PgSessionStore::trim_events(std::string_view session, std::uint64_t below_seq) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return failed("trim_events", lease.status());
  auto trimmed = (*lease)->exec(
      "DELETE FROM toolmux_session_events WHERE session_id = $1 AND seq < $2::bigint",
      {PgParam::text(session), seq_param(below_seq)});
  if (!trimmed.ok()) failed("trim_events", trimmed.status());
}

}  // namespace toolmux
