#include <atomic>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "src/builtins/tool_search.h"

using toolmux::SearchableCatalog;
using toolmux::SearchIndexHolder;

TEST_CASE("the index is built when first asked for, once, whoever asks at the same time") {
  SearchIndexHolder holder;
  std::atomic<int> builds{0};
  std::vector<nlohmann::json> tools = {{{"name", "read_file"}}};
  holder.set_on_first_use([&] {
    ++builds;
    // Long enough for the other threads to ask meanwhile.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto built = std::make_shared<SearchableCatalog>();
    built->tools = &tools;
    return std::shared_ptr<const SearchableCatalog>(built);
  });
  CHECK(builds == 0);  // set: nothing built yet

  std::vector<std::shared_ptr<const SearchableCatalog>> seen(4);
  std::vector<std::thread> askers;
  for (auto& slot : seen) askers.emplace_back([&holder, &slot] { slot = holder.get(); });
  for (auto& asker : askers) asker.join();
  CHECK(builds == 1);
  for (const auto& got : seen) {
    REQUIRE(got != nullptr);
    CHECK(got == seen[0]);  // every asker got the one index
    CHECK(got->tools == &tools);
  }
  CHECK(holder.get() == seen[0]);
  CHECK(builds == 1);
}

TEST_CASE("an index set as built replaces one still to build, which then never runs") {
  SearchIndexHolder holder;
  bool built_lazily = false;
  holder.set_on_first_use([&] {
    built_lazily = true;
    return std::shared_ptr<const SearchableCatalog>(std::make_shared<SearchableCatalog>());
  });
  auto ready = std::make_shared<const SearchableCatalog>();
  holder.set(ready);
  CHECK(holder.get() == ready);
  CHECK_FALSE(built_lazily);
}
