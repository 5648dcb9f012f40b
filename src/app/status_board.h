// The operator's status page of `toolmux serve --http` (GET /status, and its
// data at GET /status.json; transports/http_server.h serves and admits them):
// the catalog by source with each tool's class, the upstreams' state, the
// open sessions, the write freeze and the latest calls of the audit trail.
//
// status_snapshot() turns facts gathered at one time (StatusFacts) into the
// JSON the page renders; every list in it is capped (StatusLimits) and says
// how many there were and whether it was cut, and every text from a tool, an
// upstream, a client or the operator is redacted as the log is
// (src/base/redact.h: known secrets and credential shapes), then cut to
// limits.text_bytes of valid UTF-8. It holds no secret: sessions by their
// label ("http-1"), never their id; no token; calls without their arguments. StatusBoard gathers
// the facts from the running server. The page itself (status_page_html) is static HTML with inline
// CSS and script, which fetches /status.json and builds its DOM from it with textContent only.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/assembly/tool_catalog.h"
#include "src/pipeline/call_journal.h"
#include "src/session/session_manager.h"
#include "src/store/journal_store.h"
#include "src/upstream/upstream.h"

namespace toolmux {

class CatalogHost;
class SessionDirectory;

struct StatusLimits {
  std::size_t tools_per_source = 200;
  std::size_t tools = 1000;  // in all sources together
  std::size_t sources = 100;
  std::size_t upstreams = 100;
  std::size_t sessions = 100;
  std::size_t calls = 50;
  std::size_t text_bytes = 300;  // descriptions, errors, reasons
};

// What the page shows, as plain data.
struct StatusFacts {
  std::chrono::system_clock::time_point now;
  std::chrono::system_clock::time_point started;  // when serve started
  std::string instance;                           // this process's id (ServeStores)
  std::string store;                              // "rocksdb" or "postgresql" (--store)
  std::shared_ptr<const Catalog> catalog;         // may be null (nothing to show)
  // Each upstream's name and health, in the catalog file's order.
  std::vector<std::pair<std::string, Upstream::Health>> upstreams;
  std::size_t open_sessions = 0;
  std::vector<SessionManager::Summary> sessions;  // newest first, at most limits.sessions
  std::size_t modern_requests = 0;                // 2026-07-28 requests being served
  // The write freeze: its reason while on; since when (nullopt: unknown).
  std::optional<std::string> freeze;
  std::optional<std::chrono::system_clock::time_point> freeze_since;
  // The newest calls of the audit trail, newest first; up to limits.calls + 1
  // (one more says the list was cut).
  std::vector<AuditRecord> calls;
  std::string calls_unavailable;  // why no calls can be shown ("" = they can)
  // Records of calls kept because the store could not take them yet
  // (src/store/spooled_journal_store.h).
  std::size_t calls_kept = 0;
};

nlohmann::json status_snapshot(const StatusFacts& facts, const StatusLimits& limits = {});

// The page: self-contained HTML (no external URL of any kind); its inline
// <script> and <style> carry kStatusNonce (transports/http_server.h).
std::string_view status_page_html();

// Gathers StatusFacts from the running server. snapshot() may be called from
// any thread; answers are reused for 500 ms, so that many open pages cost
// one gathering a poll. `host`, `sessions` and `journal` must outlive it.
class StatusBoard {
 public:
  // `instance` and `store` are shown as they are (StatusFacts).
  StatusBoard(CatalogHost& host, SessionDirectory& sessions,
              std::shared_ptr<const CallJournal> journal, StatusLimits limits = {},
              std::string instance = "", std::string store = "rocksdb");
  nlohmann::json snapshot();
  StatusFacts gather() const;

 private:
  CatalogHost& host_;
  SessionDirectory& sessions_;
  const std::shared_ptr<const CallJournal> journal_;
  const StatusLimits limits_;
  const std::string instance_;
  const std::string store_;
  const std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();

  std::mutex mutex_;
  std::chrono::steady_clock::time_point made_{};
  nlohmann::json last_;
};

}  // namespace toolmux
