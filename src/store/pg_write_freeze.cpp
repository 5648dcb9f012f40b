#include "src/store/pg_write_freeze.h"

namespace toolmux {

Result<std::optional<PgWriteFreeze>> read_pg_write_freeze(PgPool& pool) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  auto row = (*lease)->exec("SELECT reason, since_ns FROM toolmux_write_freeze");
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return std::optional<PgWriteFreeze>();
  return std::optional<PgWriteFreeze>(
      PgWriteFreeze{std::string(row->text(0, 0)),
                    std::chrono::system_clock::time_point(
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::nanoseconds(row->integer(0, 1))))});
}

Status freeze_pg_writes(PgPool& pool, const std::string& reason,
                        std::chrono::system_clock::time_point now) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  const auto since_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  auto written = (*lease)->exec(
      "INSERT INTO toolmux_write_freeze (reason, since_ns) VALUES ($1, $2) "
      "ON CONFLICT (only_row) DO UPDATE SET reason = EXCLUDED.reason",
      {PgParam::text(reason), PgParam::integer(since_ns)});
  return written.ok() ? Status() : written.status();
}

Status thaw_pg_writes(PgPool& pool) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  auto removed = (*lease)->exec("DELETE FROM toolmux_write_freeze");
  return removed.ok() ? Status() : removed.status();
}

}  // namespace toolmux
