// The run-time write freeze of a deployment that shares a PostgreSQL store:
// one row of toolmux_write_freeze, there while the freeze is on, which
// `toolmux freeze on|off --store postgresql` writes and removes and every
// instance reads (each second, and at once when the cluster bus says
// "freeze"). The file data_dir/write-freeze is then not looked at.
//
// The reason is stored as given; the caller cleans and bounds it
// (src/app/write_freeze.h). Thread-safe (the pool is).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "src/base/status.h"
#include "src/store/pg_connection.h"

namespace toolmux {

struct PgWriteFreeze {
  std::string reason;
  std::chrono::system_clock::time_point since;
};

// The freeze, nullopt while it is off; the pool's Status when the store
// cannot be read.
Result<std::optional<PgWriteFreeze>> read_pg_write_freeze(PgPool& pool);
// Switches it on (or replaces the reason, keeping `since` of the first
// switch), or off.
Status freeze_pg_writes(PgPool& pool, const std::string& reason,
                        std::chrono::system_clock::time_point now);
Status thaw_pg_writes(PgPool& pool);

}  // namespace toolmux
