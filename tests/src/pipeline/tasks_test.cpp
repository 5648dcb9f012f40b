// Tasks (the tasks extension) below the protocol layer: a call's task as its
// client sees it through tasks/get, tasks/update and tasks/cancel, with the
// real session and store (in memory, and RocksDB across a reopen).
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "src/pipeline/tasks.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

struct TaskFixture : PipelineFixture {
  Tasks tasks{TaskOptions{}, logger};
  std::shared_ptr<CallControl> control = std::make_shared<CallControl>();

  std::shared_ptr<TaskRun> promoted(const json& id) {
    auto run = tasks.link(session, id, control, "slow");
    REQUIRE(run->promote());
    return run;
  }
  json get(const std::string& principal, const std::string& task_id) {
    auto got = tasks.get(principal, {{"taskId", task_id}});
    if (auto* e = std::get_if<JsonRpcError>(&got))
      return {{"error", e->message}, {"code", e->code}};
    return std::get<json>(got);
  }
};

}  // namespace

TEST_CASE("a promoted call answers its client with the task, which ends with the call's result") {
  TaskFixture f;
  auto run = f.promoted(1);
  json created = f.sink.response(1)["result"];
  CHECK(created["resultType"] == "task");
  CHECK(created["status"] == "working");
  CHECK(created["ttlMs"] == 3600000);
  const std::string id = created["taskId"];
  CHECK(f.get("local", id)["status"] == "working");
  CHECK_FALSE(f.get("local", id).contains("result"));
  run->finish(CallResult::answered(ToolResult::text("done")));
  json done = f.get("local", id);
  CHECK(done["status"] == "completed");
  CHECK(done["result"]["content"][0]["text"] == "done");
  CHECK(done["resultType"] == "complete");
}

TEST_CASE("another principal's task is unknown, as is one that never was") {
  TaskFixture f;
  f.promoted(1);
  const std::string id = f.sink.response(1)["result"]["taskId"];
  json other = f.get("someone-else", id);
  CHECK(other["code"] == -32602);
  CHECK_THAT(other["error"].get<std::string>(), Catch::Contains("is known to this caller"));
  CHECK(f.get("local", "nope")["code"] == -32602);
  CHECK(f.get("local", "")["code"] == -32602);
}

TEST_CASE("a question waiting in a task ends when the task is cancelled") {
  TaskFixture f;
  auto run = f.promoted(1);
  const std::string id = f.sink.response(1)["result"]["taskId"];
  ClientAnswer answer;
  std::thread asker([&] {
    answer = run->ask("elicitation/create", {{"message", "sure?"}}, "confirm", {},
                      std::chrono::steady_clock::now() + std::chrono::seconds(5));
  });
  json waiting;
  for (int i = 0; i < 200; ++i) {
    waiting = f.get("local", id);
    if (waiting["status"] == "input_required") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(waiting["inputRequests"]["confirm"]["method"] == "elicitation/create");
  auto ack = f.tasks.cancel("local", {{"taskId", id}});
  CHECK(std::get<json>(ack) == json{{"resultType", "complete"}});
  asker.join();
  CHECK_FALSE(answer.result);
  CHECK(answer.error == "the task was cancelled");
  CHECK(f.get("local", id)["status"] == "cancelled");
}

TEST_CASE("tasks/update answers a waiting question, and no other") {
  TaskFixture f;
  auto run = f.promoted(1);
  const std::string id = f.sink.response(1)["result"]["taskId"];
  ClientAnswer answer;
  std::thread asker([&] {
    answer = run->ask("elicitation/create", json::object(), "", {},
                      std::chrono::steady_clock::now() + std::chrono::seconds(5));
  });
  for (int i = 0; i < 200 && f.get("local", id)["status"] != "input_required"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto refused = f.tasks.update("local", {{"taskId", id}, {"inputResponses", "yes"}});
  CHECK(std::get<JsonRpcError>(refused).code == -32602);
  f.tasks.update("local", {{"taskId", id}, {"inputResponses", {{"input-9", 1}, {"input-1", 2}}}});
  asker.join();
  REQUIRE(answer.result);
  CHECK(*answer.result == 2);
  CHECK(f.get("local", id)["status"] == "working");
}

TEST_CASE("a RocksDB task store keeps finished tasks and fails unfinished ones at reopen") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("toolmux-tasks-" + std::to_string(std::random_device{}()));
  TaskRecord done{"d",         "local",   "t",
                  "completed", "",        1000,
                  1000,        1'000'000, json{{"content", json::array()}},
                  nullptr,     nullptr};
  TaskRecord running{"r",  "local",   "t",     "working", "",     1000,
                     1000, 1'000'000, nullptr, nullptr,   nullptr};
  {
    auto store = open_rocksdb_task_store(dir, 4, 2000);
    REQUIRE(store.ok());
    REQUIRE((*store)->put(done).ok());
    REQUIRE((*store)->put(running).ok());
    CHECK_FALSE((*(*store)->get("someone-else", "d")).has_value());
  }
  auto store = open_rocksdb_task_store(dir, 4, 3000);
  REQUIRE(store.ok());
  auto kept = (*store)->get("local", "d");
  REQUIRE(*kept);
  CHECK((**kept).status == "completed");
  auto orphan = (*store)->get("local", "r");
  REQUIRE(*orphan);
  CHECK((**orphan).status == "failed");
  CHECK((**orphan).updated_ms == 3000);
  CHECK_THAT((**orphan).error["message"].get<std::string>(),
             Catch::Contains("toolmux stopped while the task ran"));
  CHECK((*store)->expire(1'002'000) == 2);
  CHECK_FALSE((*(*store)->get("local", "d")).has_value());
  store = Status::not_found("closed");
  std::filesystem::remove_all(dir);
}
