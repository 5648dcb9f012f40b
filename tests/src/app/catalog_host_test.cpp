// CatalogHost's seams for instances that share a store: what it announces,
// what another instance's news does, and the freeze read from a source.
#include "src/app/catalog_host.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/eventually.h"
#include "tests/support/quiet_logger.h"
#include "tests/support/temp_dir.h"

using toolmux::testing::eventually;
using toolmux::testing::QuietLogger;
using toolmux::testing::TempDir;

namespace toolmux {

namespace {

constexpr const char* kCatalog = R"({
  "tools": [{
    "name": "touch_note",
    "description": "Writes a note.",
    "inputSchema": {"type": "object"},
    "sideEffect": "local_mutation",
    "timeoutMs": 1000,
    "command": {"argv": ["true"]}
  }]
})";

// What the host told: its announcements, and how many catalogs replaced.
struct Told {
  std::mutex mutex;
  std::vector<std::string> announced;
  int replaced = 0;

  std::vector<std::string> announcements() {
    std::lock_guard lock(mutex);
    return announced;
  }
  int replacements() {
    std::lock_guard lock(mutex);
    return replaced;
  }
};

struct Host {
  TempDir dir;
  QuietLogger quiet;
  Told told;
  std::unique_ptr<CatalogHost> host;

  explicit Host(const CatalogHost::FreezeSource& freeze = {}) {
    ServeOptions options;
    options.catalog_file = dir.write("catalog.json", kCatalog);
    options.data_dir = dir / "data";
    ResultStoreOptions results;
    results.data_dir = options.data_dir;
    host = std::make_unique<CatalogHost>(options, std::vector<NativeTool>{},
                                         std::make_shared<LazyResultStore>(results), quiet.logger,
                                         options.data_dir);
    host->set_announce([this](std::string_view kind, const nlohmann::json& data) {
      std::lock_guard lock(told.mutex);
      told.announced.push_back(std::string(kind) + (data.empty() ? "" : " " + data.dump()));
    });
    if (freeze) host->set_freeze_source(freeze);
    Problems problems;
    REQUIRE(host->start(problems));
    host->add_listener([this](const std::shared_ptr<const Catalog>&) {
      std::lock_guard lock(told.mutex);
      ++told.replaced;
    });
  }
  ~Host() { host->stop(); }
};

}  // namespace

TEST_CASE("a reload this instance asked for is announced, one another instance asked for is not",
          "[catalog_host]") {
  Host h;
  h.host->request_reload();
  REQUIRE(eventually([&] { return h.told.replacements() == 1; }));
  REQUIRE(eventually([&] { return h.told.announcements().size() == 1; }));
  CHECK(h.told.announcements().front() == "reload");

  h.host->take_peer_event("reload", nlohmann::json::object());
  REQUIRE(eventually([&] { return h.told.replacements() == 2; }));
  // A peer's reload must not echo back round the cluster.
  CHECK(h.told.announcements().size() == 1);

  // Kinds it does not know, and a list_changed of an upstream it has not,
  // change nothing.
  h.host->take_peer_event("something_new", nlohmann::json::object());
  h.host->take_peer_event("list_changed", {{"upstream", "not-here"}});
  h.host->take_peer_event("list_changed", {{"upstream", 7}});
  CHECK_FALSE(
      eventually([&] { return h.told.replacements() > 2; }, std::chrono::milliseconds(1500)));
}

TEST_CASE("the freeze comes from the source it is given, at once when a peer says freeze",
          "[catalog_host]") {
  std::mutex mutex;
  CatalogHost::FreezeReading now;  // off
  const auto since = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  Host h([&] {
    std::lock_guard lock(mutex);
    return now;
  });
  CHECK_FALSE(h.host->current()->write_freeze.has_value());
  {
    std::lock_guard lock(mutex);
    now.reason = "schema migration";
    now.since = since;
    now.where = "the shared store";
  }
  h.host->take_peer_event("freeze", nlohmann::json::object());
  REQUIRE(eventually([&] { return h.host->current()->write_freeze.has_value(); },
                     std::chrono::milliseconds(900)));
  CHECK(*h.host->current()->write_freeze == "schema migration");
  CHECK(h.host->freeze_since() == since);
  // The tool that writes is out of what is published while frozen.
  const auto published = [&] {
    std::vector<std::string> names;
    for (const auto& tool : h.host->current()->published) names.push_back(tool.value("name", ""));
    return names;
  };
  const auto frozen = published();
  CHECK(std::find(frozen.begin(), frozen.end(), "touch_note") == frozen.end());

  // A source that cannot be read leaves the freeze as it was.
  {
    std::lock_guard lock(mutex);
    now = CatalogHost::FreezeReading{};
    now.known = false;
  }
  h.host->take_peer_event("freeze", nlohmann::json::object());
  CHECK_FALSE(eventually([&] { return !h.host->current()->write_freeze.has_value(); },
                         std::chrono::milliseconds(1500)));

  {
    std::lock_guard lock(mutex);
    now = CatalogHost::FreezeReading{};
  }
  h.host->take_peer_event("resync", nlohmann::json::object());
  REQUIRE(eventually([&] { return !h.host->current()->write_freeze.has_value(); }));
  CHECK_FALSE(h.host->freeze_since().has_value());
  const auto names = published();
  CHECK(std::find(names.begin(), names.end(), "touch_note") != names.end());
  // A freeze switched by the source is not this instance's news to tell.
  CHECK(h.told.announcements().empty());
}

}  // namespace toolmux
