#include "src/store/pg_tool_lists.h"

#include <chrono>

#include "src/base/untrusted_json.h"

namespace toolmux {

using nlohmann::json;

Result<std::optional<std::vector<json>>> read_pg_tool_list(PgPool& pool,
                                                           const std::string& upstream) {
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  auto row = (*lease)->exec("SELECT tools FROM toolmux_tool_lists WHERE upstream = $1",
                            {PgParam::text(upstream)});
  if (!row.ok()) return row.status();
  if (row->rows() == 0) return std::optional<std::vector<json>>();
  // Anyone who may write the database may have written it: read as untrusted.
  const ParsedJson parsed = parse_untrusted_json(row->text(0, 0));
  if (!parsed.ok() || !parsed.value.is_array()) return std::optional<std::vector<json>>();
  return std::optional<std::vector<json>>(parsed.value.get<std::vector<json>>());
}

Status write_pg_tool_list(PgPool& pool, const std::string& upstream,
                          const std::vector<json>& tools) {
  const std::string text = json(tools).dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMaxStoredToolListBytes) {
    return Status::invalid_argument("the tool list of upstream \"" + upstream + "\" is " +
                                    std::to_string(text.size()) + " bytes, over the " +
                                    std::to_string(kMaxStoredToolListBytes) + " kept");
  }
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  auto written = (*lease)->exec(
      "INSERT INTO toolmux_tool_lists (upstream, tools, listed_ns) VALUES ($1, $2, $3) "
      "ON CONFLICT (upstream) DO UPDATE SET tools = EXCLUDED.tools, listed_ns = EXCLUDED.listed_ns",
      {PgParam::text(upstream), PgParam::text(text), PgParam::integer(now)});
  return written.ok() ? Status() : written.status();
}

}  // namespace toolmux
