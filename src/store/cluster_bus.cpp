#include "src/store/cluster_bus.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "src/base/digest.h"
#include "src/base/untrusted_json.h"

namespace toolmux {

namespace {

using nlohmann::json;

// How long a poll waits before looking at the connection again: a bound on
// how late a lost connection is noticed when the server sends nothing.
constexpr int kPollMillis = 1000;

Result<std::unique_ptr<PgConnection>> connect_and_listen(const ClusterBusOptions& options) {
  auto connection = PgConnection::connect(options.conninfo, options.connect);
  if (!connection.ok()) return connection.status();
  // The channel is an identifier, not a parameter: a constant, never input.
  // Appended, not `std::string(...) + literal`: GCC 12 warns of that (a false
  // -Warray-bounds) once the precompiled headers are in.
  auto listened = (*connection)->exec(std::string("LISTEN ").append(kClusterChannel));
  if (!listened.ok()) return listened.status();
  return std::move(*connection);
}

Result<PgResult> send_event(PgConnection& connection, const std::string& payload) {
  return connection.exec("SELECT pg_notify($1, $2)",
                         {PgParam::text(kClusterChannel), PgParam::text(payload)});
}

}  // namespace

Result<std::string> cluster_event_payload(const std::string& from, std::string_view kind,
                                          const json& data) {
  if (!data.is_object()) return Status::invalid_argument("a cluster event's data is an object");
  std::string payload = json{{"v", 1}, {"from", from}, {"kind", kind}, {"data", data}}.dump();
  if (payload.size() > kMaxClusterEventBytes) {
    return Status::invalid_argument("a cluster event of " + std::to_string(payload.size()) +
                                    " bytes is over the limit of " +
                                    std::to_string(kMaxClusterEventBytes));
  }
  return payload;
}

Status notify_cluster(PgPool& pool, const std::string& from, std::string_view kind,
                      const json& data) {
  auto payload = cluster_event_payload(from, kind, data);
  if (!payload.ok()) return payload.status();
  auto lease = pool.acquire();
  if (!lease.ok()) return lease.status();
  auto sent = send_event(**lease, *payload);
  return sent.ok() ? Status() : sent.status();
}

std::string session_id_digest(std::string_view session_id) { return sha256_hex(session_id); }

Result<std::unique_ptr<ClusterBus>> ClusterBus::start(ClusterBusOptions options, Handler handler,
                                                      Logger& logger) {
  auto listening = connect_and_listen(options);
  if (!listening.ok()) return listening.status();
  std::unique_ptr<ClusterBus> bus(
      new ClusterBus(std::move(options), std::move(handler), logger, std::move(*listening)));
  if (::pipe2(bus->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::io_error("cannot make the cluster bus's wake pipe");
  }
  bus->thread_ = std::thread([raw = bus.get()] { raw->run(); });
  return bus;
}

ClusterBus::ClusterBus(ClusterBusOptions options, Handler handler, Logger& logger,
                       std::unique_ptr<PgConnection> listening)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      logger_(logger),
      listening_(std::move(listening)) {}

ClusterBus::~ClusterBus() {
  stop();
  for (int fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

void ClusterBus::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  stop_wake_.notify_all();
  if (wake_pipe_[1] >= 0) {
    const char byte = 1;
    (void)!::write(wake_pipe_[1], &byte, 1);
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  listening_.reset();
  std::lock_guard lock(publish_mutex_);
  publishing_.reset();
}

Status ClusterBus::publish(std::string_view kind, const json& data) {
  auto payload = cluster_event_payload(options_.instance_id, kind, data);
  if (!payload.ok()) return payload.status();
  std::lock_guard lock(publish_mutex_);
  // One retry on a fresh connection: the one kept may have gone stale.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!publishing_ || publishing_->broken()) {
      publishing_.reset();
      auto connection = PgConnection::connect(options_.conninfo, options_.connect);
      if (!connection.ok()) return connection.status();
      publishing_ = std::move(*connection);
    }
    auto sent = send_event(*publishing_, *payload);
    if (sent.ok()) return Status();
    if (!sent.status().is_unavailable() || attempt == 1) return sent.status();
    publishing_.reset();
  }
  return Status();
}

void ClusterBus::run() {
  while (true) {
    {
      std::lock_guard lock(stop_mutex_);
      if (stopping_) return;
    }
    if (listen_once()) continue;
    logger_.write(LogLevel::warning, "cluster_bus_lost",
                  {{"store", listening_->target()},
                   {"effect", "changes made by other instances are seen late until it is back"}});
    if (!reconnect()) return;
    logger_.write(LogLevel::info, "cluster_bus_back", {{"store", listening_->target()}});
    ++delivered_;
    handler_(ClusterEvent{"resync", json::object(), ""});
  }
}

bool ClusterBus::listen_once() {
  pollfd fds[2] = {{listening_->socket(), POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
  const int ready = ::poll(fds, 2, kPollMillis);
  if (ready < 0 && errno != EINTR) return false;
  if (fds[1].revents != 0) return true;  // stop(): run() sees stopping_
  // Also after a timeout: reading nothing notices a connection the server
  // closed.
  auto received = listening_->take_notifications();
  if (!received.ok()) return false;
  for (const PgNotification& notification : *received) deliver(notification);
  return true;
}

void ClusterBus::deliver(const PgNotification& notification) {
  if (notification.channel != kClusterChannel) return;
  const auto dropped = [&](const char* why) {
    // At most one line per 64 dropped payloads after the first few.
    if (++dropped_ <= 3 || dropped_ % 64 == 0) {
      logger_.write(LogLevel::warning, "cluster_event_dropped",
                    {{"why", why}, {"dropped", dropped_}});
    }
  };
  if (notification.payload.size() > kMaxClusterEventBytes) return dropped("too large");
  const ParsedJson parsed = parse_untrusted_json(notification.payload, {.max_depth = 8});
  const json& v = parsed.value;
  if (!parsed.ok() || !v.is_object() || v.value("v", json()) != 1 || !v.contains("from") ||
      !v["from"].is_string() || !v.contains("kind") || !v["kind"].is_string() ||
      !v.contains("data") || !v["data"].is_object()) {
    return dropped("not a toolmux event");
  }
  ClusterEvent event{v["kind"].get<std::string>(), v["data"], v["from"].get<std::string>()};
  if (event.from == options_.instance_id) return;
  ++delivered_;
  handler_(event);
}

bool ClusterBus::reconnect() {
  auto wait = options_.backoff_min;
  while (true) {
    {
      std::unique_lock lock(stop_mutex_);
      if (stop_wake_.wait_for(lock, wait, [this] { return stopping_; })) return false;
    }
    auto connection = connect_and_listen(options_);
    if (connection.ok()) {
      listening_ = std::move(*connection);
      return true;
    }
    wait = std::min(wait * 2, options_.backoff_max);
  }
}

}  // namespace toolmux
