// Session::request_client: a request to the client, waited for without
// polling: the answer, the call's cancellation or the request's end wakes it.
#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "src/session/session.h"

using namespace toolmux;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// Keeps what the session sends.
class KeepingSink : public MessageSink {
 public:
  void send(const json& message, const json& /*related_request*/) override {
    std::lock_guard lock(mutex_);
    sent_.push_back(message);
  }
  json last() {
    std::lock_guard lock(mutex_);
    return sent_.empty() ? json(nullptr) : sent_.back();
  }

 private:
  std::mutex mutex_;
  std::vector<json> sent_;
};

// Runs `action` on another thread after `delay`.
std::jthread after(std::chrono::milliseconds delay, std::function<void()> action) {
  return std::jthread([delay, action = std::move(action)] {
    std::this_thread::sleep_for(delay);
    action();
  });
}

}  // namespace

TEST_CASE("request_client returns the client's answer when it comes") {
  KeepingSink sink;
  auto session = std::make_shared<Session>("s", "local", "test", sink);
  auto answer = after(50ms, [&] {
    const json request = sink.last();
    session->deliver_response(request["id"], {{"id", request["id"]}, {"result", {{"ok", 1}}}});
  });
  ClientAnswer got = session->request_client("elicitation/create", json::object(), 7, nullptr, 60s);
  CHECK(got.error.empty());
  REQUIRE(got.result.has_value());
  CHECK(*got.result == json{{"ok", 1}});
}

TEST_CASE("request_client stops waiting when the call that asked is cancelled or aborted") {
  KeepingSink sink;
  auto session = std::make_shared<Session>("s", "local", "test", sink);
  for (const bool abort : {false, true}) {
    auto control = std::make_shared<CallControl>();
    auto stopper = after(50ms, [&] { abort ? control->abort() : control->cancel(); });
    const auto start = Clock::now();
    ClientAnswer got =
        session->request_client("elicitation/create", json::object(), 7, control.get(), 60s);
    CHECK(got.error == "the call was cancelled or timed out while waiting for the client");
    CHECK(Clock::now() - start < 30s);  // not the 60 s timeout
  }
}

TEST_CASE("request_client stops waiting at the call's deadline, or when the request ends") {
  KeepingSink sink;
  auto session = std::make_shared<Session>("s", "local", "test", sink);
  auto control = std::make_shared<CallControl>();
  control->set_deadline(Clock::now() + 100ms);
  const auto start = Clock::now();
  ClientAnswer expired =
      session->request_client("elicitation/create", json::object(), 7, control.get(), 60s);
  CHECK(expired.error == "the call was cancelled or timed out while waiting for the client");
  CHECK(Clock::now() - start < 30s);

  std::stop_source request;
  auto ender = after(50ms, [&] { request.request_stop(); });
  ClientAnswer ended = session->request_client("elicitation/create", json::object(), 7, nullptr,
                                               60s, request.get_token());
  CHECK(ended.error == "the request it was sent for has ended");

  ClientAnswer late =
      session->request_client("elicitation/create", json::object(), 7, nullptr, 100ms);
  CHECK(late.error == "the client did not answer elicitation/create in time");
}
