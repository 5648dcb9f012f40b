#include "src/store/pg_result_store.h"

#include <algorithm>
#include <cstdint>
#include <system_error>
#include <utility>

#include "src/base/random_id.h"
#include "src/store/db_keys.h"
#include "src/store/pg_connection.h"
#include "src/store/pg_schema.h"
#include "src/store/result_text.h"

namespace toolmux {

namespace {

// Deletes the oldest results until those left, newest first with the one
// just written ($1) first of all, add up to at most $2 bytes.
constexpr std::string_view kEvict = R"sql(
WITH kept AS (
  SELECT id, sum(bytes) OVER (ORDER BY id = $1 DESC, created_ns DESC, seq DESC) AS upto
  FROM toolmux_results)
DELETE FROM toolmux_results r USING kept WHERE r.id = kept.id AND kept.upto > $2::bigint)sql";

// The chunks a page from character $2 to before $3 covers: from the one
// holding $2 on.
constexpr std::string_view kPageChunks = R"sql(
SELECT first_char, data FROM toolmux_result_chunks
WHERE result_id = $1 AND first_char < $3::bigint AND first_char >= (
  SELECT coalesce(max(first_char), 0) FROM toolmux_result_chunks
  WHERE result_id = $1 AND first_char <= $2::bigint)
ORDER BY first_char)sql";

}  // namespace

Result<std::unique_ptr<PgResultStore>> PgResultStore::open(const ResultStoreOptions& options) {
  if (!options.postgres) {
    return Status::invalid_argument("the PostgreSQL result store needs a PostgreSQL store");
  }
  std::unique_ptr<PgResultStore> store(new PgResultStore(options));
  if (!store->options_.now) store->options_.now = std::chrono::system_clock::now;
  {
    auto lease = options.postgres->pool().acquire();
    if (!lease.ok()) return lease.status();
  }
  store->expire_old();
  return store;
}

std::int64_t PgResultStore::now_ns() const { return to_ns(options_.now()); }

std::int64_t PgResultStore::cutoff_ns() const {
  return now_ns() - result_text::retention_ns(options_.retention);
}

std::string PgResultStore::where() const { return "PostgreSQL at " + options_.postgres->target(); }

Result<std::string> PgResultStore::put(std::string_view owner, std::string_view text,
                                       const StoredFormat& format) {
  if (Status refused = result_text::check_put(text, format, options_.max_bytes); !refused.ok()) {
    return refused;
  }
  constexpr std::int64_t kSweepEveryNs = 60'000'000'000;  // a minute
  const std::int64_t now = now_ns();
  std::int64_t last = last_sweep_ns_.load();
  if (now - last >= kSweepEveryNs && last_sweep_ns_.compare_exchange_strong(last, now)) {
    expire_old();
  }
  std::string id;
  try {
    id = random_id(result_text::kIdBytes);
  } catch (const std::system_error& e) {
    return Status::io_error(std::string("could not generate a result id: ") + e.what());
  }

  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return lease.status();
  auto transaction = PgTransaction::begin(**lease);
  if (!transaction.ok()) return transaction.status();
  auto row = transaction->exec(
      "INSERT INTO toolmux_results (id, owner, created_ns, bytes, chars, mime_type, base64) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7)",
      {PgParam::text(id), PgParam::text(owner), PgParam::integer(now),
       PgParam::integer(static_cast<std::int64_t>(text.size())),
       PgParam::integer(static_cast<std::int64_t>(utf8_length(text))),
       PgParam::text(format.mime_type), PgParam::text(format.base64 ? "true" : "false")});
  if (!row.ok()) return row.status();
  Status written;
  result_text::for_each_chunk(text, [&](std::string_view chunk, std::uint64_t first_char) {
    auto inserted = transaction->exec(
        "INSERT INTO toolmux_result_chunks (result_id, first_char, chars, data) "
        "VALUES ($1, $2, $3, $4)",
        {PgParam::text(id), PgParam::integer(static_cast<std::int64_t>(first_char)),
         PgParam::integer(static_cast<std::int64_t>(utf8_length(chunk))), PgParam::bytes(chunk)});
    if (!inserted.ok()) written = inserted.status();
    return written.ok();
  });
  if (!written.ok()) return written;
  // One instance at a time counts and evicts, so that together they stay
  // within max_bytes; the lock is held only from here to the commit.
  auto locked =
      transaction->exec("SELECT pg_advisory_xact_lock($1)", {PgParam::integer(kPgLockResultSpace)});
  if (!locked.ok()) return locked.status();
  auto evicted = transaction->exec(
      kEvict, {PgParam::text(id), PgParam::integer(static_cast<std::int64_t>(
                                      std::min<std::uint64_t>(options_.max_bytes, INT64_MAX)))});
  if (!evicted.ok()) return evicted.status();
  if (Status committed = transaction->commit(); !committed.ok()) return committed;
  return id;
}

Result<ResultPage> PgResultStore::read(std::string_view owner, std::string_view id,
                                       std::uint64_t offset_chars, std::size_t max_chars) const {
  if (!result_text::may_be_id(id)) return result_text::not_found();
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return lease.status();
  auto row = (*lease)->exec("SELECT owner, created_ns, chars FROM toolmux_results WHERE id = $1",
                            {PgParam::text(id)});
  if (!row.ok()) return row.status();
  if (row->rows() != 1 || row->text(0, 0) != owner || row->integer(0, 1) <= cutoff_ns()) {
    return result_text::not_found();
  }
  const auto chars = static_cast<std::uint64_t>(row->integer(0, 2));
  if (offset_chars > chars) return result_text::past_the_end(offset_chars, chars);

  ResultPage page;
  page.offset = offset_chars;
  page.total_chars = chars;
  const std::uint64_t want = std::min<std::uint64_t>(max_chars, chars - offset_chars);
  if (want > 0) {
    auto data = (*lease)->exec(
        kPageChunks, {PgParam::text(id), PgParam::integer(static_cast<std::int64_t>(offset_chars)),
                      PgParam::integer(static_cast<std::int64_t>(offset_chars + want))});
    if (!data.ok()) return data.status();
    if (data->rows() == 0) return result_text::not_found();  // deleted meanwhile
    const auto first = static_cast<std::uint64_t>(data->integer(0, 0));
    result_text::PageText text(offset_chars - first, want);
    for (int i = 0; i < data->rows() && !text.complete(); ++i) text.add(data->bytes(i, 1));
    if (!text.complete()) return result_text::not_found();  // deleted meanwhile
    page.text = std::move(text.text());
  }
  const std::uint64_t next = offset_chars + want;
  if (next < chars) page.next_offset = next;
  return page;
}

namespace {

// The rows of `rows` (id, owner, bytes, chars, created_ns, mime_type, base64).
std::vector<StoredResult> stored_results(const PgResult& rows) {
  std::vector<StoredResult> out;
  out.reserve(static_cast<std::size_t>(rows.rows()));
  for (int i = 0; i < rows.rows(); ++i) {
    StoredResult r;
    r.id = rows.text(i, 0);
    r.owner = rows.text(i, 1);
    r.bytes = static_cast<std::uint64_t>(rows.integer(i, 2));
    r.chars = static_cast<std::uint64_t>(rows.integer(i, 3));
    r.created = from_ns(rows.integer(i, 4));
    r.format.mime_type = rows.text(i, 5);
    r.format.base64 = rows.text(i, 6) == "t";
    out.push_back(std::move(r));
  }
  return out;
}

// The columns stored_results reads: one owner's results that have not
// expired ($1, $2: the cutoff), or every result.
constexpr std::string_view kListOwner =
    "SELECT id, owner, bytes, chars, created_ns, mime_type, base64 FROM toolmux_results "
    "WHERE owner = $1 AND created_ns > $2 ORDER BY created_ns, seq";
constexpr std::string_view kListAll =
    "SELECT id, owner, bytes, chars, created_ns, mime_type, base64 FROM toolmux_results "
    "ORDER BY created_ns, seq";

}  // namespace

std::vector<StoredResult> PgResultStore::list(std::string_view owner) const {
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return {};
  auto rows = (*lease)->exec(kListOwner, {PgParam::text(owner), PgParam::integer(cutoff_ns())});
  if (!rows.ok()) return {};
  return stored_results(*rows);
}

Result<std::vector<StoredResult>> PgResultStore::list_all() const {
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return lease.status();
  auto rows = (*lease)->exec(kListAll);
  if (!rows.ok()) return rows.status();
  return stored_results(*rows);
}

Status PgResultStore::remove(std::string_view id) {
  if (!result_text::may_be_id(id)) return result_text::no_such_result(id);
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return lease.status();
  // The chunks go with it (ON DELETE CASCADE).
  auto deleted = (*lease)->exec("DELETE FROM toolmux_results WHERE id = $1", {PgParam::text(id)});
  if (!deleted.ok()) return deleted.status();
  if (deleted->affected() == 0) return result_text::no_such_result(id);
  return Status::ok_status();
}

void PgResultStore::delete_owner(std::string_view owner) {
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return;
  (void)(*lease)->exec("DELETE FROM toolmux_results WHERE owner = $1", {PgParam::text(owner)});
}

std::size_t PgResultStore::expire_old() {
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return 0;
  auto transaction = PgTransaction::begin(**lease);
  if (!transaction.ok()) return 0;
  auto mine = try_advisory_xact_lock(*transaction, kPgLockResultExpiry);
  if (!mine.ok() || !*mine) return 0;  // another instance is at it
  auto deleted = transaction->exec("DELETE FROM toolmux_results WHERE created_ns <= $1",
                                   {PgParam::integer(cutoff_ns())});
  if (!deleted.ok() || !transaction->commit().ok()) return 0;
  return static_cast<std::size_t>(deleted->affected());
}

std::uint64_t PgResultStore::stored_bytes() const {
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return 0;
  auto sum = (*lease)->exec("SELECT coalesce(sum(bytes), 0) FROM toolmux_results");
  return sum.ok() ? static_cast<std::uint64_t>(sum->integer(0, 0)) : 0;
}

std::size_t PgResultStore::stored_count() const {
  auto lease = options_.postgres->pool().acquire();
  if (!lease.ok()) return 0;
  auto count = (*lease)->exec("SELECT count(*) FROM toolmux_results");
  return count.ok() ? static_cast<std::size_t>(count->integer(0, 0)) : 0;
}

}  // namespace toolmux
