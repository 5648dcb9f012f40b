// How the instances that share one PostgreSQL database tell each other what
// changed, with LISTEN/NOTIFY on the channel `toolmux_events`: a catalog
// reload, an upstream's new tool list, the write freeze switched, a session
// ended. Each instance listens on a connection of its own (one thread) and
// publishes on another; an instance never hears its own events.
//
// Notifications are not stored: one sent while an instance's listening
// connection was down is lost to it. So after every reconnect the handler gets
// a "resync" event, on which an instance looks again at everything the events
// stand for (the catalog file, the freeze, its upstreams' tools). An event is
// a nudge to look now; what it is about is always read from where it lives.
//
// A notification's payload is JSON, {"v":1,"from":ID,"kind":K,"data":{...}},
// at most kMaxClusterEventBytes. Anyone who may connect to the database can
// NOTIFY on the channel, so a payload is read as untrusted text: one that is
// not such JSON is logged (rate limited) and dropped.
//
// Thread-safe: publish() may be called from any thread. The handler runs on
// the bus's thread, one event at a time: it must not wait for long (post the
// work elsewhere), and must not call stop() or destroy the bus.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "src/base/logger.h"
#include "src/base/status.h"
#include "src/store/pg_connection.h"

namespace toolmux {

// The channel every instance LISTENs on.
inline constexpr const char* kClusterChannel = "toolmux_events";
// The largest payload published (PostgreSQL's own limit is just under 8000).
inline constexpr std::size_t kMaxClusterEventBytes = 4000;

struct ClusterEvent {
  // "reload", "list_changed", "freeze", "session_ended", "session_events",
  // ... as published;
  // "resync" after the bus reconnected (from is then empty).
  std::string kind;
  nlohmann::json data = nlohmann::json::object();
  std::string from;  // the publishing instance's id
};

struct ClusterBusOptions {
  std::string conninfo;
  std::string instance_id;  // this instance: its own events are not delivered to it
  PgConnectOptions connect;
  // After a lost connection, the first retry waits backoff_min, each failed
  // one doubles the wait up to backoff_max.
  std::chrono::milliseconds backoff_min{100};
  std::chrono::milliseconds backoff_max{5'000};
};

class ClusterBus {
 public:
  using Handler = std::function<void(const ClusterEvent&)>;

  // Connects, LISTENs, and starts the bus's thread. The first connection is
  // waited for: its unavailable (naming host, port and database) when it
  // fails. Losses after that are logged (cluster_bus_lost, then
  // cluster_bus_back) and retried with back-off.
  static Result<std::unique_ptr<ClusterBus>> start(ClusterBusOptions options, Handler handler,
                                                   Logger& logger);
  ~ClusterBus();  // stop()
  ClusterBus(const ClusterBus&) = delete;
  ClusterBus& operator=(const ClusterBus&) = delete;

  // Tells every other instance: `data` must be an object. invalid_argument
  // when the payload would be larger than kMaxClusterEventBytes; unavailable
  // when the store cannot be reached (nothing is sent).
  Status publish(std::string_view kind, const nlohmann::json& data = nlohmann::json::object());

  // Stops the thread and closes the connections. Idempotent.
  void stop();

  const std::string& instance_id() const { return options_.instance_id; }
  // Events delivered to the handler so far (resyncs included).
  std::uint64_t delivered() const { return delivered_.load(); }

 private:
  ClusterBus(ClusterBusOptions options, Handler handler, Logger& logger,
             std::unique_ptr<PgConnection> listening);
  void run();
  // Waits on the listening connection's socket (or the wake pipe) and
  // delivers what arrived; false when the connection was lost.
  bool listen_once();
  void deliver(const PgNotification& notification);
  // Reconnects and LISTENs again, waiting out the back-off; false when
  // stopping.
  bool reconnect();

  const ClusterBusOptions options_;
  const Handler handler_;
  Logger& logger_;
  std::unique_ptr<PgConnection> listening_;  // the bus thread's

  std::mutex publish_mutex_;  // guards publishing_
  std::unique_ptr<PgConnection> publishing_;

  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stopping_ = false;
  int wake_pipe_[2] = {-1, -1};  // written by stop() to end a poll at once
  std::atomic<std::uint64_t> delivered_{0};
  std::uint64_t dropped_ = 0;  // bus thread only
  std::thread thread_;
};

// Tells every instance listening on the store, from a program that does not
// listen itself (`toolmux freeze --store postgresql`): one NOTIFY on a
// connection of `pool`. `from` names the sender. As ClusterBus::publish for
// its errors.
Status notify_cluster(PgPool& pool, const std::string& from, std::string_view kind,
                      const nlohmann::json& data = nlohmann::json::object());

// The text NOTIFY sends for an event of `from`: invalid_argument when `data`
// is not an object or the text would be larger than kMaxClusterEventBytes.
// For a store that notifies in the statement that made the news
// (PgSessionStore::set_append_notice).
Result<std::string> cluster_event_payload(const std::string& from, std::string_view kind,
                                          const nlohmann::json& data);

// The SHA-256 (hex) of a session id: what a "session_ended" event names, so
// that ids (bearer secrets) never travel in notifications or logs.
std::string session_id_digest(std::string_view session_id);

}  // namespace toolmux
