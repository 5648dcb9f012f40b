#include "src/app/cluster_link.h"

#include <utility>

#include "src/app/write_freeze.h"
#include "src/store/pg_search_memory.h"
#include "src/store/pg_tool_lists.h"
#include "src/store/pg_write_freeze.h"

namespace toolmux {

Result<std::unique_ptr<ClusterLink>> ClusterLink::start(const std::string& conninfo,
                                                        const std::string& instance_id,
                                                        PgPool& pool, CatalogHost& host,
                                                        Logger& logger) {
  std::unique_ptr<ClusterLink> link(new ClusterLink(host, pool, logger));
  ClusterBusOptions options;
  options.conninfo = conninfo;
  options.instance_id = instance_id;
  auto bus = ClusterBus::start(
      std::move(options), [raw = link.get()](const ClusterEvent& event) { raw->take(event); },
      logger);
  if (!bus.ok()) return bus.status();
  link->bus_ = std::move(*bus);
  host.set_freeze_source([raw = link.get()] { return raw->read_freeze(); });
  host.set_announce([raw = link.get()](std::string_view kind, const nlohmann::json& data) {
    raw->publish(kind, data);
  });
  host.set_tools_cache(
      [&pool, &logger](const std::string& upstream) -> std::optional<std::vector<nlohmann::json>> {
        auto read = read_pg_tool_list(pool, upstream);
        if (read.ok()) return *read;
        logger.write(LogLevel::warning, "tool_list_unread",
                     {{"upstream", upstream}, {"reason", read.message()}});
        return std::nullopt;
      },
      [&pool, &logger](const std::string& upstream, const std::vector<nlohmann::json>& tools) {
        if (const Status written = write_pg_tool_list(pool, upstream, tools); !written.ok()) {
          logger.write(LogLevel::warning, "tool_list_not_kept",
                       {{"upstream", upstream}, {"reason", written.message()}});
        }
      });
  host.set_search_memory_keeper([&pool, &logger](std::shared_ptr<SearchMemory> memory) {
    return std::make_unique<PgSearchMemory>(pool, std::move(memory), logger);
  });
  return link;
}

ClusterLink::~ClusterLink() { stop(); }

void ClusterLink::stop() {
  if (bus_) bus_->stop();
}

void ClusterLink::publish(std::string_view kind, const nlohmann::json& data) {
  if (!bus_) return;
  if (const Status sent = bus_->publish(kind, data); !sent.ok()) {
    // The others find out at their next resync or poll; nothing here waits.
    logger_.write(LogLevel::warning, "cluster_event_not_sent",
                  {{"kind", kind}, {"reason", sent.message()}});
  }
}

void ClusterLink::session_ended(std::string_view session_id) {
  publish("session_ended", {{"session", session_id_digest(session_id)}});
}

void ClusterLink::set_session_forgetter(std::function<void(const std::string&)> forget) {
  std::lock_guard lock(forget_mutex_);
  forget_ = std::move(forget);
}

void ClusterLink::set_session_waker(std::function<void(const std::string&)> wake) {
  std::lock_guard lock(forget_mutex_);
  wake_ = std::move(wake);
}

void ClusterLink::take(const ClusterEvent& event) {
  const bool ended = event.kind == "session_ended";
  if (ended || event.kind == "session_events") {
    // Many of the latter (one an event stored): not logged.
    const auto digest = event.data.find("session");
    if (digest == event.data.end() || !digest->is_string()) return;
    std::lock_guard lock(forget_mutex_);
    if (const auto& tell = ended ? forget_ : wake_) tell(digest->get<std::string>());
    return;
  }
  logger_.write(LogLevel::debug, "cluster_event", {{"kind", event.kind}, {"from", event.from}});
  host_.take_peer_event(event.kind, event.data);
}

CatalogHost::FreezeReading ClusterLink::read_freeze() {
  CatalogHost::FreezeReading reading;
  reading.where = "the shared store";
  auto read = read_pg_write_freeze(pool_);
  if (!read.ok()) {
    // Unknown: the freeze stays as it was last read. Said once per outage.
    reading.known = false;
    if (!freeze_unread_logged_) {
      freeze_unread_logged_ = true;
      logger_.write(LogLevel::warning, "write_freeze_unread",
                    {{"reason", read.message()}, {"effect", "the freeze stays as last read"}});
    }
    return reading;
  }
  freeze_unread_logged_ = false;
  if (read->has_value()) {
    reading.reason = clean_freeze_reason((*read)->reason);
    reading.since = (*read)->since;
  }
  return reading;
}

}  // namespace toolmux
