// The last tool list of each upstream, kept in a deployment's shared
// PostgreSQL store (toolmux_tool_lists, one row an upstream, by name) beside
// each instance's own file: a lazy upstream's tools are then known to an
// instance that never started it, from whichever instance listed it last.
// Instances running one catalog name their upstreams alike; two different
// upstreams under one name would share a row.
//
// Thread-safe (the pool is).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/status.h"
#include "src/store/pg_connection.h"

namespace toolmux {

// The largest list kept, in bytes of JSON text; a longer one is not written.
inline constexpr std::size_t kMaxStoredToolListBytes = std::size_t{16} << 20;

// The list last written for `upstream`; nullopt when none was (or it cannot be
// read as a JSON array); the pool's Status when the store cannot be read.
Result<std::optional<std::vector<nlohmann::json>>> read_pg_tool_list(PgPool& pool,
                                                                     const std::string& upstream);
// Replaces the list kept for `upstream`. invalid_argument when it is larger
// than kMaxStoredToolListBytes.
Status write_pg_tool_list(PgPool& pool, const std::string& upstream,
                          const std::vector<nlohmann::json>& tools);

}  // namespace toolmux
