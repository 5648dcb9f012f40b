// What `serve` serves from, kept current while it runs: the catalog file, the
// upstream MCP servers it declares, and the Catalog snapshot built from both.
//
// A new snapshot replaces the old one (every on_replace listener is told,
// e.g. McpServer::replace_catalog, which notifies the clients) when:
// - the catalog file changes on disk (its size, time or inode, looked at
//   every second) or SIGHUP arrives: the file is loaded and checked as
//   `toolmux check` would; a valid one replaces the old catalog as a whole
//   (upstreams started, stopped or restarted to match), an invalid one is
//   refused with the check report in the log, and the old one keeps serving;
// - an upstream's tools change (it started, restarted, or said
//   list_changed): the snapshot is rebuilt from the last valid file;
// - the write freeze is switched on or off (data_dir/write-freeze, looked at
//   every second: src/app/write_freeze.h): rebuilt likewise.
// Requests coming close together are served by one rebuild.
//
// It also keeps what tool_search learns from use, which outlives every
// snapshot: while the catalog learns (its "search"."learn", on by default), one
// SearchMemory, loaded from and saved to data_dir/search-memory
// (src/store/search_memory_file.h: every 5 minutes when it changed, and at
// stop()), and one SearchClicks over it, given to each snapshot. Both are made
// the first time a catalog that learns is built; while the catalog does not
// learn, no snapshot has them, and until one does, the file is neither read nor
// written. With no data_dir the memory lives in memory only. Instances that
// share a store keep it there instead (set_search_memory_keeper,
// src/store/pg_search_memory.h).
//
// Instances that share a store (src/store/cluster_bus.h) keep each other
// current through two seams set before start(): announce() is told, on the
// host's thread, of a reload this instance decided on and of an upstream
// whose tools changed here; take_peer_event() is how another instance's news
// comes in. The freeze may be read from the store instead of the file
// (set_freeze_source).
//
// One thread of its own does every reload and rebuild, and another takes
// SIGHUP (block_reload_signal() must run before any thread starts). Public
// methods may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/app/cli.h"
#include "src/assembly/tool_catalog.h"
#include "src/base/logger.h"
#include "src/builtins/search_clicks.h"
#include "src/store/lazy_result_store.h"
#include "src/store/search_memory_file.h"
#include "src/store/search_memory_keeper.h"
#include "src/store/upstream_logins.h"
#include "src/upstream/upstreams.h"

namespace toolmux {

// Blocks SIGHUP in the calling thread and the threads it starts from then on,
// so that CatalogHost's thread takes it with sigwait.
void block_reload_signal();

class CatalogHost {
 public:
  using Listener = std::function<void(std::shared_ptr<const Catalog>)>;

  // The write freeze as a source says it is now.
  struct FreezeReading {
    bool known = true;                  // false: the source could not be read; nothing changes
    std::optional<std::string> reason;  // nullopt: off
    std::optional<std::chrono::system_clock::time_point> since;  // when it was switched on
    std::string where;                                           // for the log
  };
  using FreezeSource = std::function<FreezeReading()>;
  // "reload" ({}) or "list_changed" ({"upstream": name}).
  using Announce = std::function<void(std::string_view kind, const nlohmann::json& data)>;

  CatalogHost(ServeOptions options, std::vector<NativeTool> native_tools,
              std::shared_ptr<LazyResultStore> results, Logger& logger,
              const std::filesystem::path& data_dir, NativeProviders native_providers = {});
  ~CatalogHost();
  CatalogHost(const CatalogHost&) = delete;
  CatalogHost& operator=(const CatalogHost&) = delete;

  // The first load: starts the upstreams (waiting for the eager ones to list
  // their tools) and builds the first snapshot. Null with `problems` when the
  // file or the options are unusable. Then watches for changes.
  std::shared_ptr<const Catalog> start(Problems& problems);
  std::shared_ptr<const Catalog> current() const;
  // Adds a listener; the returned id removes it (remove_listener waits for a
  // replacement being announced to end).
  int add_listener(Listener listener);
  void remove_listener(int id);
  // The upstreams running now, in the catalog file's order.
  std::vector<std::shared_ptr<Upstream>> upstreams() const;
  // Since when the run-time write freeze (data_dir/write-freeze) is on: the
  // file's time; nullopt while it is off.
  std::optional<std::chrono::system_clock::time_point> freeze_since() const;
  // Asks for a reload of the file, as SIGHUP does.
  void request_reload();

  // Where upstreams' last tool lists are also kept (the shared store), beside
  // data_dir/upstreams. Before start().
  using ReadTools =
      std::function<std::optional<std::vector<nlohmann::json>>(const std::string& upstream)>;
  using WriteTools =
      std::function<void(const std::string& upstream, const std::vector<nlohmann::json>& tools)>;
  void set_tools_cache(ReadTools read, WriteTools write);
  // Where the logins of upstreams that need a person's login are kept
  // (toolmux login: data_dir/logins, or the shared store). Before start().
  void set_logins(std::shared_ptr<UpstreamLogins> logins);
  // Where the search memory is kept instead of data_dir/search-memory: made
  // with the memory, when it is made. Before start().
  using MemoryKeeper =
      std::function<std::unique_ptr<SearchMemoryKeeper>(std::shared_ptr<SearchMemory> memory)>;
  void set_search_memory_keeper(MemoryKeeper keeper);

  // Where the write freeze is read instead of data_dir/write-freeze (looked
  // at every second all the same). Before start().
  void set_freeze_source(FreezeSource source);
  // Told "reload" after a reload this instance decided on (its file changed,
  // SIGHUP, request_reload()) that replaced the catalog, and "list_changed"
  // with the upstream's name after an upstream's tools changed here. Called
  // on the host's thread. Before start().
  void set_announce(Announce announce);
  // Another instance's news: "reload" reloads the file (and is not announced
  // again), "list_changed" has the upstream it names list its tools again,
  // "freeze" looks at the freeze now, "resync" (news may have been missed)
  // does all three, for every upstream. Other kinds are ignored. Returns at
  // once.
  void take_peer_event(std::string_view kind, const nlohmann::json& data);
  // Stops watching and stops the upstreams, then saves the search memory.
  // Idempotent.
  void stop();

 private:
  void run();
  // True when a new catalog replaced the old one.
  bool reload();
  void rebuild();
  FreezeReading read_freeze_file() const;
  void replace(const std::shared_ptr<const Catalog>& catalog);
  std::optional<std::string> file_signature() const;
  std::string skills_signature() const;
  // options_ with the write freeze as it is now.
  ServeOptions build_options() const;
  // Reads data_dir/write-freeze; true when the freeze changed (logged).
  bool look_at_freeze();
  // What a build of `load` (null: no catalog file) learns with: null when
  // its file says "learn": false; else the clicks, made (and the memory
  // loaded) the first time.
  std::shared_ptr<SearchClicks> learning(const CatalogLoad* load);

  const ServeOptions options_;
  const std::vector<NativeTool> native_tools_;
  const NativeProviders native_providers_;
  const std::shared_ptr<LazyResultStore> results_;
  Logger& logger_;
  const std::filesystem::path data_dir_;
  std::unique_ptr<UpstreamSet> upstreams_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<const Catalog> current_;
  std::optional<CatalogLoad> loaded_;  // the last valid file (guarded by mutex_)
  std::optional<std::string> signature_;
  std::optional<std::string> freeze_;  // the write freeze's reason while it is on
  std::optional<std::chrono::system_clock::time_point> freeze_since_;
  bool reload_wanted_ = false;
  bool local_reload_wanted_ = false;  // a reload this instance decided on: announced
  bool rebuild_wanted_ = false;
  bool freeze_look_wanted_ = false;
  std::vector<std::string> changed_upstreams_;  // to announce
  FreezeSource freeze_source_;
  Announce announce_;
  ReadTools read_tools_;
  WriteTools write_tools_;
  std::shared_ptr<UpstreamLogins> logins_;
  bool stopping_ = false;
  std::thread worker_;
  std::thread signal_taker_;
  std::atomic<bool> signal_taker_stop_{false};

  MemoryKeeper memory_keeper_factory_;  // set before start()
  std::mutex learning_mutex_;           // guards the two below
  std::shared_ptr<SearchClicks> clicks_;
  std::unique_ptr<SearchMemoryKeeper> memory_keeper_;

  std::mutex listeners_mutex_;  // held while listeners are told
  std::vector<std::pair<int, Listener>> listeners_;
  int next_listener_ = 1;
};

}  // namespace toolmux
