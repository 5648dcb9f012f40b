// The options of `toolmux serve` (also read by check and search: the catalog,
// roots and allow_writes). Filled by the command line (src/app/cli.h); read by
// the layers that assemble and serve the catalog. Plain data.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/base/log_level.h"

namespace toolmux {

// Where serve keeps what instances of one deployment share (--store).
enum class StoreKind {
  rocksdb,     // the data directory, for one machine (the default)
  postgresql,  // PostgreSQL, shared by every instance that uses the same database
};

struct ServeOptions {
  std::filesystem::path catalog_file;        // empty = built-in tools only
  std::vector<std::filesystem::path> roots;  // empty = the working directory
  std::filesystem::path data_dir;            // empty = $XDG_STATE_HOME/toolmux
  // --store postgresql: offloaded results and the requestState key go to
  // PostgreSQL. Its connection string is never on the command line (it may
  // hold a password): it is the first line of store_url_file when given,
  // else $TOOLMUX_POSTGRES_URL (src/app/store_url.h).
  StoreKind store = StoreKind::rocksdb;
  std::filesystem::path store_url_file;
  bool allow_writes = false;
  // --read-only: every tool but read_only ones is refused and left out of
  // tools/list and tool_search, as under the run-time write freeze
  // (data_dir/write-freeze, `toolmux freeze`).
  bool read_only = false;
  // The run-time freeze's reason while it is on: filled in by CatalogHost
  // from data_dir/write-freeze before each build, never by the command line.
  std::optional<std::string> write_freeze;
  // The journal of mutations and the audit trail (src/store/journal_store.h);
  // --no-journal turns both off (benchmarks, throwaway servers).
  bool journal = true;
  std::size_t audit_retention_days = 30;
  std::size_t page_size = 0;  // 0 = all tools on one page
  std::size_t max_message_bytes = std::size_t{16} << 20;
  LogLevel log_level = LogLevel::info;  // of the stderr log
  // Calls running at once, overall and per session, and waiting for a place
  // (src/session/call_admission.h).
  std::size_t max_calls = 64;
  std::size_t max_session_calls = 16;
  std::size_t max_queued_calls = 256;
  // --otlp-endpoint: where traces and metrics are exported (src/app/telemetry_for.h);
  // "" = the OTEL_EXPORTER_OTLP_* variables, if any.
  std::string otlp_endpoint;

  // Streamable HTTP instead of stdio (--http HOST:PORT).
  bool http = false;
  std::string http_host = "127.0.0.1";
  int http_port = 0;
  std::string http_path = "/mcp";
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_origins;
  std::filesystem::path tokens_file;  // "principal=token" lines; also $TOOLMUX_TOKENS
  // With tokens, the principals who may see the status page (/status);
  // without tokens it is the local operator's.
  std::vector<std::string> status_principals;
  // OAuth 2.1 access tokens (docs/authorization.md): the authorization
  // servers whose tokens count, and this server's canonical URI, the
  // audience those tokens must name.
  std::vector<std::string> auth_issuers;
  std::string resource_url;
  // Scope -> the side-effect classes its tokens may call ("read_only", ...),
  // in the order given: the first scope that allows a class is the one a
  // client is told to ask for. Empty: every token may do what the access
  // rules let its subject do.
  std::vector<std::pair<std::string, std::vector<std::string>>> auth_scopes;
  // Opaque tokens are introspected (RFC 7662) as this client; its secret is
  // read from this file or $TOOLMUX_INTROSPECTION_SECRET.
  std::string introspection_client_id;
  std::filesystem::path introspection_secret_file;
  // Calls one session may have waiting; stdio has one session, which may use
  // the whole queue.
  std::size_t max_session_queued_calls = 64;
  std::size_t max_sessions = 1000;
  std::size_t session_idle_seconds = 3600;
  std::size_t shutdown_grace_seconds = 10;
  std::size_t max_connections = 1024;
  std::size_t max_connections_per_client = 256;
  std::size_t header_timeout_seconds = 10;
  std::size_t body_timeout_seconds = 60;
};

}  // namespace toolmux
