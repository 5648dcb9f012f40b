// One upstream MCP server kept serving: started (at once, or on first use
// when lazy), restarted with exponential backoff when it crashes or drops,
// guarded by a circuit breaker, and re-listed when it says its tools changed.
//
// Calls go through call_tool() (or request(), for other methods):
// - while the upstream is down between restarts, or its breaker is open,
//   they fail at once (Failure::unavailable) with a message that says why
//   and when the next attempt is; a lazy upstream's first call starts it and
//   waits for it within the call's deadline;
// - a call that gets no answer (lost, timed out, invalid) counts toward the
//   breaker; answers, isError results and JSON-RPC errors do not; a cancelled
//   call counts neither way;
// - a read_only call whose upstream was lost under it is tried again when the
//   next restart attempt brings it back (it waits for that one attempt, within
//   the call's deadline, and fails if it does not), at most
//   lifecycle.read_only_retries times and within a retry budget (a token
//   bucket: 10 tokens, each retry takes one, each answered call gives back
//   0.1). Nothing else is ever retried.
//
// Each start finds the upstream's era (McpClient::connect: the server/discover
// probe, then initialize for a legacy one). A legacy era is remembered: a
// restart goes straight to initialize, and probes again only when that
// fails. A modern upstream's list changes (and the resources toolmux's
// clients subscribed to) come through one subscriptions/listen, opened after
// each start and opened again, with backoff (1 s doubling to 60 s; tools are
// listed again each time, in case a change was missed), when it ends.
//
// One supervisor thread per upstream starts, restarts and re-lists it;
// on_tools_changed is called from that thread after each listing that
// differs from the last (the first included). Every public method may be
// called from any thread. Owned through std::shared_ptr; stop() ends the
// supervisor and the upstream, and must be called before the last owner lets
// go.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog_search.h"
#include "catalog/tool.h"
#include "catalog/upstream_spec.h"
#include "src/base/logger.h"
#include "src/upstream/mcp_client.h"

namespace toolmux {

// What an upstream that needs a person's login says (its start fails with it,
// and so do calls of its tools): which command to run.
std::string login_needed_text(const std::string& upstream);

class Upstream : public std::enable_shared_from_this<Upstream> {
 public:
  struct Hooks {
    // Called with the upstream's name.
    std::function<void(const std::string& upstream)> on_tools_changed;
    // Where else its last tool list is kept, beside the file `tools_cache`
    // (a deployment's shared store): read first when it is made (a lazy
    // upstream's tools known from any instance's last listing), written after
    // each change. Either may be empty.
    std::function<std::optional<std::vector<nlohmann::json>>(const std::string& upstream)>
        read_tools;
    std::function<void(const std::string& upstream, const std::vector<nlohmann::json>& tools)>
        write_tools;
    // Notifications other than tools/list_changed, progress and log messages
    // (resources/updated, resources/list_changed, prompts/list_changed).
    std::function<void(const std::string& upstream, const std::string& method,
                       const nlohmann::json& params)>
        on_notification;
    // An upstream whose "oauth" grant is authorization_code: the login
    // `toolmux login` kept for it ("" when none; src/store/upstream_logins.h),
    // and where a refreshed one goes. Secret: never logged.
    std::function<std::string(const std::string& upstream)> read_login;
    std::function<void(const std::string& upstream, const std::string& login)> write_login;
  };

  // `tools_cache`: where the last tool list is kept between runs, so a lazy
  // upstream's tools are known before it starts (empty path: no cache).
  static std::shared_ptr<Upstream> create(UpstreamSpec spec, Logger& logger,
                                          std::filesystem::path tools_cache, Hooks hooks);
  ~Upstream();
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  // Starts the supervisor: an eager upstream is started now, and so is a lazy
  // one whose tools no earlier run cached. Returns at once.
  void start();
  // Waits until the first start attempt has ended (listed or failed), or
  // `timeout`; true when it serves. A lazy upstream that is not started
  // returns at once (false).
  bool wait_started(std::chrono::milliseconds timeout);
  // Ends the supervisor and the upstream; calls in flight fail. Idempotent.
  void stop();
  // Lists its tools again soon, as when it says tools/list_changed (another
  // instance sharing the store heard that its copy of this upstream changed).
  // A lazy upstream not started here takes them from the shared store again
  // (Hooks::read_tools), where that instance put them; its next start lists
  // them. Nothing otherwise while it is not running.
  void request_relist();

  const std::string& name() const { return spec_.name; }
  // The spec it runs with. A reload with the same connection may change the
  // rest (prefix, overrides, lifecycle numbers) with set_spec.
  UpstreamSpec spec() const;
  void set_spec(UpstreamSpec spec);
  // Its tools as last listed (or cached); empty before it ever listed.
  std::vector<nlohmann::json> tools() const;
  // The upstream's declared capabilities (initialize result), {} until started.
  nlohmann::json capabilities() const;
  // What tool_search knows of this server: its name, the title and
  // description of its serverInfo, and the catalog's "description" and the
  // server's instructions as its description (the catalog's alone until it
  // has answered once).
  SourceInfo source_info() const;
  // "serving" ("serving (protocol 2026-07-28)" for a modern upstream),
  // "starting", "not started (starts on first use)", "restarting: ...",
  // "circuit open after ...", "stopped".
  std::string state() const;
  // What an operator's status page shows of it, read at one instant.
  struct Health {
    // "serving", "starting", "not_started" (lazy, unused yet), "restarting"
    // (down; the next attempt is at next_attempt), "needs_login" (down
    // until a person runs `toolmux login`; tried again at next_attempt),
    // "breaker_open" (calls are
    // refused until breaker_until), "stopped".
    std::string phase;
    std::string state;  // state()'s text at the same instant
    // Why it last went down, failed to start, or had its breaker opened (the
    // call's error), and when; "" = never.
    std::string last_error;
    std::optional<std::chrono::system_clock::time_point> last_error_at;
    // Start attempts after the first (each restart after a crash, a drop or
    // a failed start).
    std::uint64_t restarts = 0;
    std::size_t tools = 0;  // as last listed (or cached)
    std::optional<std::chrono::system_clock::time_point> breaker_until;
    std::optional<std::chrono::system_clock::time_point> next_attempt;
    std::string protocol;  // as protocol()
  };
  Health health() const;
  // The era it spoke when it last served (legacy before it ever did).
  ProtocolEra era() const;
  // The protocol version it last spoke ("2026-07-28", "2025-11-25"); "" before.
  std::string protocol() const;

  // A modern upstream's resource subscriptions, for toolmux's clients: the
  // URIs go in its subscriptions/listen filter (which is opened anew with
  // them). At most kMaxResourceSubscriptions; past it, or when the upstream
  // refused to listen, resource_exhausted / unavailable naming why.
  static constexpr std::size_t kMaxResourceSubscriptions = 1000;
  Status subscribe_resource(const std::string& uri);
  void unsubscribe_resource(const std::string& uri);

  McpClient::Outcome call_tool(const std::string& tool, const nlohmann::json& arguments,
                               CallContext& context, SideEffect effect);
  McpClient::Outcome request(const std::string& method, nlohmann::json params,
                             std::chrono::steady_clock::time_point deadline, CallContext* context);

 private:
  using Clock = std::chrono::steady_clock;
  Upstream(UpstreamSpec spec, Logger& logger, std::filesystem::path tools_cache, Hooks hooks);
  void supervise();
  std::string state_locked() const;  // state(), under mutex_
  // A started client and the tools it listed.
  struct Connected {
    std::shared_ptr<McpClient> client;
    std::vector<nlohmann::json> tools;
  };
  // One start: transport, initialize, tools/list; or why it failed.
  Result<Connected> connect();
  void relist(const std::shared_ptr<McpClient>& client);
  // The subscriptions/listen filter for what toolmux wants of the upstream
  // now (empty: nothing to listen for). Under mutex_.
  nlohmann::json listen_filter_locked() const;
  // Told by `client` that its subscription ended.
  void listen_ended(const McpClient* client, const std::string& why, bool refused);
  // `listed`: the upstream's own answer, kept in the shared store too; else
  // read from there.
  void set_tools(const std::vector<nlohmann::json>& tools, bool listed = true);
  // Admission: the client to send on, or a failure outcome. `guarded`: the
  // breaker applies to this call (it is on, and the call only reads); `probe`
  // is set when this call is the breaker's probe.
  std::shared_ptr<McpClient> admit(Clock::time_point deadline, bool guarded, bool& probe,
                                   McpClient::Outcome& refused);
  void record(const McpClient::Outcome& outcome, bool guarded, bool probe);
  bool take_retry_token();
  // `reads`: the call changes nothing (a read_only tool's, or a request
  // other than tools/call), so the breaker may refuse it and counts it.
  McpClient::Outcome send(const std::function<McpClient::Outcome(McpClient&)>& run,
                          Clock::time_point deadline, bool retry_when_lost, bool reads);

  UpstreamSpec spec_;  // name never changes; the rest guarded by mutex_
  Logger& logger_;
  const std::filesystem::path tools_cache_;
  Hooks hooks_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::thread supervisor_;
  bool stopping_ = false;
  bool wanted_ = false;  // started, or to be started (false: lazy and unused yet)
  bool first_attempt_done_ = false;
  bool relist_wanted_ = false;
  std::shared_ptr<McpClient> client_;  // null while down
  bool client_closed_ = false;         // client_'s transport has closed
  std::string down_reason_;            // why it is down ("" before the first start)
  std::string last_error_;             // for health(): kept after it serves again
  std::chrono::system_clock::time_point last_error_at_{};
  int attempts_ = 0;                 // failed starts in a row
  std::uint64_t attempts_done_ = 0;  // start attempts ended, ever (success or not)
  Clock::time_point next_attempt_{};
  std::chrono::milliseconds delay_{0};
  Clock::time_point serving_since_{};
  std::vector<nlohmann::json> tools_;
  bool tools_known_ = false;
  nlohmann::json capabilities_ = nlohmann::json::object();
  nlohmann::json server_info_ = nlohmann::json::object();  // of the last connection
  std::string instructions_;
  ProtocolEra era_ = ProtocolEra::legacy;
  std::string protocol_;
  bool legacy_known_ = false;  // it spoke a legacy version: restarts skip the probe
  // A modern upstream's subscription.
  bool listen_wanted_ = false;  // (re)open it at listen_at_
  Clock::time_point listen_at_{};
  Clock::time_point listening_since_{};
  int listen_failures_ = 0;  // ended in a row, for the backoff
  bool listen_refused_ = false;
  bool relist_after_listen_ = false;
  std::set<std::string> resource_subscriptions_;
  // Breaker.
  int consecutive_failures_ = 0;
  bool breaker_open_ = false;
  Clock::time_point breaker_until_{};
  bool probe_in_flight_ = false;
  double retry_tokens_ = 10;
};

}  // namespace toolmux
