#include "src/store/pg_session_store.h"

#include <algorithm>
#include <limits>

#include "src/store/pg_connection.h"

namespace toolmux {

using nlohmann::json;

namespace {

// A seq as a bigint: the transport counts up from 1, far below 2^63.
PgParam seq_param(std::uint64_t seq) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return PgParam::integer(static_cast<std::int64_t>(std::min(seq, kMax)));
}

}  // namespace

void PgSessionStore::put_session(std::string_view id, const json& record) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return;
  (void)(*lease)->exec(
      "INSERT INTO toolmux_sessions (id, record) VALUES ($1, $2) "
      "ON CONFLICT (id) DO UPDATE SET record = excluded.record",
      {PgParam::text(id), PgParam::text(record.dump())});
}

void PgSessionStore::delete_session(std::string_view id) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return;
  auto transaction = PgTransaction::begin(**lease);
  if (!transaction.ok()) return;
  if (!transaction
           ->exec("DELETE FROM toolmux_session_events WHERE session_id = $1", {PgParam::text(id)})
           .ok() ||
      !transaction->exec("DELETE FROM toolmux_sessions WHERE id = $1", {PgParam::text(id)}).ok()) {
    return;
  }
  (void)transaction->commit();
}

std::vector<std::pair<std::string, json>> PgSessionStore::load_sessions() const {
  std::vector<std::pair<std::string, json>> sessions;
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return sessions;
  // Byte order, whatever the database's collation.
  auto rows = (*lease)->exec("SELECT id, record FROM toolmux_sessions ORDER BY id COLLATE \"C\"");
  if (!rows.ok()) return sessions;
  for (int i = 0; i < rows->rows(); ++i) {
    json record = json::parse(rows->text(i, 1), nullptr, false);
    if (record.is_discarded()) continue;
    sessions.emplace_back(std::string(rows->text(i, 0)), std::move(record));
  }
  return sessions;
}

void PgSessionStore::append_event(std::string_view session, const StoredEvent& event) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return;
  (void)(*lease)->exec(
      "INSERT INTO toolmux_session_events (session_id, seq, stream, data, final) "
      "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id, seq) DO UPDATE "
      "SET stream = excluded.stream, data = excluded.data, final = excluded.final",
      {PgParam::text(session), seq_param(event.seq), seq_param(event.stream),
       PgParam::bytes(event.data), PgParam::text(event.final ? "true" : "false")});
}

std::vector<StoredEvent> PgSessionStore::events_after(std::string_view session,
                                                      std::uint64_t after_seq) const {
  std::vector<StoredEvent> events;
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return events;
  auto rows = (*lease)->exec(
      "SELECT seq, stream, data, final FROM toolmux_session_events "
      "WHERE session_id = $1 AND seq > $2 ORDER BY seq",
      {PgParam::text(session), seq_param(after_seq)});
  if (!rows.ok()) return events;
  events.reserve(static_cast<std::size_t>(rows->rows()));
  for (int i = 0; i < rows->rows(); ++i) {
    events.push_back({static_cast<std::uint64_t>(rows->integer(i, 0)),
                      static_cast<std::uint64_t>(rows->integer(i, 1)), rows->bytes(i, 2),
                      rows->text(i, 3) == "t"});
  }
  return events;
}

std::uint64_t PgSessionStore::last_seq(std::string_view session) const {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return 0;
  auto row = (*lease)->exec(
      "SELECT coalesce(max(seq), 0) FROM toolmux_session_events WHERE session_id = $1",
      {PgParam::text(session)});
  return row.ok() ? static_cast<std::uint64_t>(row->integer(0, 0)) : 0;
}

void PgSessionStore::trim_events(std::string_view session, std::uint64_t below_seq) {
  auto lease = store_->pool().acquire();
  if (!lease.ok()) return;
  (void)(*lease)->exec("DELETE FROM toolmux_session_events WHERE session_id = $1 AND seq < $2",
                       {PgParam::text(session), seq_param(below_seq)});
}

}  // namespace toolmux
