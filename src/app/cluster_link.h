// An instance's place among the instances that share one PostgreSQL store
// (`serve --store postgresql`): it runs the cluster bus
// (src/store/cluster_bus.h), publishes what the catalog host announces (a
// reload decided here, an upstream whose tools changed here), hands the other
// instances' news to the catalog host, reads the write freeze from the store
// (src/store/pg_write_freeze.h), keeps upstreams' last tool lists there
// too (src/store/pg_tool_lists.h), and tells the others when a session ends
// here.
//
// Made before CatalogHost::start() (it sets the host's freeze source and
// announcer) and stopped before the host goes. Thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "src/app/catalog_host.h"
#include "src/base/logger.h"
#include "src/base/status.h"
#include "src/store/cluster_bus.h"
#include "src/store/pg_connection.h"

namespace toolmux {

class ClusterLink {
 public:
  // `pool` is the store's (it must outlive the link). unavailable, naming the
  // store, when the bus cannot connect.
  static Result<std::unique_ptr<ClusterLink>> start(const std::string& conninfo,
                                                    const std::string& instance_id, PgPool& pool,
                                                    CatalogHost& host, Logger& logger);
  ~ClusterLink();
  ClusterLink(const ClusterLink&) = delete;
  ClusterLink& operator=(const ClusterLink&) = delete;

  // Tells the others that the session with this id ended here (deleted or
  // expired): they forget their copies. Only a digest of the id is sent.
  void session_ended(std::string_view session_id);
  // Who forgets a session another instance ended: called on the bus's thread
  // with the id's digest (session_id_digest). Set once, before sessions run.
  void set_session_forgetter(std::function<void(const std::string& digest)> forget);
  // Who has a session's streams look again when another instance stored
  // events for it ("session_events", sent by the store itself:
  // PgSessionStore::set_append_notice). As set_session_forgetter.
  void set_session_waker(std::function<void(const std::string& digest)> wake);

  // Stops the bus: no news comes in after it returns. Idempotent.
  void stop();

 private:
  ClusterLink(CatalogHost& host, PgPool& pool, Logger& logger)
      : host_(host), pool_(pool), logger_(logger) {}
  void take(const ClusterEvent& event);
  void publish(std::string_view kind, const nlohmann::json& data);
  CatalogHost::FreezeReading read_freeze();

  CatalogHost& host_;
  PgPool& pool_;
  Logger& logger_;
  std::unique_ptr<ClusterBus> bus_;
  std::mutex forget_mutex_;  // guards the two below
  std::function<void(const std::string&)> forget_;
  std::function<void(const std::string&)> wake_;
  bool freeze_unread_logged_ = false;  // the host's thread only
};

}  // namespace toolmux
