#include "src/session/call_admission.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

using namespace toolmux;
using namespace std::chrono_literals;

namespace {

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = 5000ms) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// Submits calls and keeps, for each, its place once started (the call
// "runs" until the test lets its place go) or why it was dropped.
struct Calls {
  explicit Calls(CallLimits limits) : admission(limits, &metrics) {}

  struct Record {
    std::shared_ptr<CallControl> control = std::make_shared<CallControl>();
    std::shared_ptr<const CallPlace> place;
    bool started = false;
    bool dropped = false;
    std::string busy;
  };

  CallAdmission::Decision submit(const std::string& name, const std::string& session = "s1") {
    CallAdmission::Call call;
    call.session = session;
    call.control = control(name);
    call.start = [this, name](std::shared_ptr<const CallPlace> place) {
      std::lock_guard lock(mutex);
      records[name].place = std::move(place);
      records[name].started = true;
      order.push_back(name);
    };
    call.drop = [this, name](const std::string& busy) {
      std::lock_guard lock(mutex);
      records[name].dropped = true;
      records[name].busy = busy;
    };
    // Not under `mutex`: start may run now, on this thread.
    return admission.submit(std::move(call));
  }

  bool started(const std::string& name) {
    std::lock_guard lock(mutex);
    return records[name].started;
  }
  bool dropped(const std::string& name) {
    std::lock_guard lock(mutex);
    return records[name].dropped;
  }
  std::string busy(const std::string& name) {
    std::lock_guard lock(mutex);
    return records[name].busy;
  }
  std::shared_ptr<CallControl> control(const std::string& name) {
    std::lock_guard lock(mutex);
    return records[name].control;
  }
  // The call ends: its place is freed (and the next queued call may start).
  void finish(const std::string& name) {
    std::shared_ptr<const CallPlace> place;
    {
      std::lock_guard lock(mutex);
      place = std::move(records[name].place);
    }
    place.reset();
  }
  std::vector<std::string> started_order() {
    std::lock_guard lock(mutex);
    return order;
  }

  Metrics metrics;
  std::mutex mutex;
  std::map<std::string, Record> records;
  std::vector<std::string> order;
  CallAdmission admission;
};

}  // namespace

TEST_CASE("calls past the running limit wait in the queue, past the queue they are refused") {
  Calls calls({2, 2, 2});
  CHECK(calls.submit("a").verdict == CallAdmission::Verdict::started);
  CHECK(calls.submit("b").verdict == CallAdmission::Verdict::started);
  CHECK(calls.submit("c").verdict == CallAdmission::Verdict::queued);
  CHECK(calls.submit("d").verdict == CallAdmission::Verdict::queued);
  const auto refused = calls.submit("e");
  CHECK(refused.verdict == CallAdmission::Verdict::refused);
  CHECK(refused.refusal ==
        "toolmux is busy: 2 calls running (--max-calls 2) and 2 calls queued "
        "(--max-queued-calls 2); try again later");
  CHECK_FALSE(calls.started("e"));
  CHECK_FALSE(calls.dropped("e"));
  CHECK(calls.admission.running() == 2);
  CHECK(calls.admission.queued() == 2);

  const std::string metrics = calls.metrics.render_prometheus();
  CHECK_THAT(metrics, Catch::Contains("toolmux_calls_running 2\n"));
  CHECK_THAT(metrics, Catch::Contains("toolmux_calls_queued 2\n"));
  CHECK_THAT(metrics, Catch::Contains("toolmux_calls_refused_total 1\n"));

  // Places free up: the queued calls start in the order they came.
  calls.finish("b");
  CHECK(calls.started("c"));
  CHECK_FALSE(calls.started("d"));
  calls.finish("a");
  CHECK(calls.started("d"));
  CHECK(calls.started_order() == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(calls.admission.queued() == 0);
  calls.finish("c");
  calls.finish("d");
  CHECK(calls.admission.running() == 0);
  CHECK_THAT(calls.metrics.render_prometheus(), Catch::Contains("toolmux_calls_running 0\n"));
}

TEST_CASE("a session at its own limit waits while other sessions' calls run") {
  Calls calls({4, 1, 8});
  CHECK(calls.submit("a1", "A").verdict == CallAdmission::Verdict::started);
  CHECK(calls.submit("a2", "A").verdict == CallAdmission::Verdict::queued);
  CHECK(calls.submit("b1", "B").verdict == CallAdmission::Verdict::started);
  CHECK(calls.submit("b2", "B").verdict == CallAdmission::Verdict::queued);
  CHECK(calls.admission.running() == 2);
  // B's place frees: B's queued call starts, A's still waits for A's place.
  calls.finish("b1");
  CHECK(calls.started("b2"));
  CHECK_FALSE(calls.started("a2"));
  calls.finish("a1");
  CHECK(calls.started("a2"));
  calls.finish("a2");
  calls.finish("b2");
}

TEST_CASE("the refusal names the session's limit when that is what is full") {
  Calls calls({8, 1, 1});
  calls.submit("a", "A");
  calls.submit("b", "A");
  const auto refused = calls.submit("c", "A");
  REQUIRE(refused.verdict == CallAdmission::Verdict::refused);
  CHECK(refused.refusal ==
        "toolmux is busy: this session has 1 calls running (--max-session-calls 1) and 1 calls "
        "queued (--max-queued-calls 1); try again later");
  calls.finish("a");
  calls.finish("b");
}

TEST_CASE("one session cannot fill the queue: past its own share its calls are refused") {
  Calls calls({1, 1, 8, 2});
  CHECK(calls.submit("a1", "A").verdict == CallAdmission::Verdict::started);
  CHECK(calls.submit("a2", "A").verdict == CallAdmission::Verdict::queued);
  CHECK(calls.submit("a3", "A").verdict == CallAdmission::Verdict::queued);
  const auto refused = calls.submit("a4", "A");
  REQUIRE(refused.verdict == CallAdmission::Verdict::refused);
  CHECK(refused.refusal ==
        "toolmux is busy: 1 calls running (--max-calls 1) and this session has 2 calls queued "
        "(--max-session-queued-calls 2); try again later");
  // Another session still gets a place in the queue, and its turn.
  CHECK(calls.submit("b1", "B").verdict == CallAdmission::Verdict::queued);
  calls.finish("a1");
  calls.finish("a2");
  calls.finish("a3");
  CHECK(calls.started("b1"));
  // A's share is free again once its queued calls have left the queue.
  CHECK(calls.submit("a5", "A").verdict == CallAdmission::Verdict::queued);
  calls.finish("b1");
  calls.finish("a5");
  CHECK(calls.admission.queued() == 0);
}

TEST_CASE("a queued call that is cancelled leaves the queue without running") {
  Calls calls({1, 1, 4});
  calls.submit("a");
  REQUIRE(calls.submit("b").verdict == CallAdmission::Verdict::queued);
  REQUIRE(calls.submit("c").verdict == CallAdmission::Verdict::queued);
  calls.control("b")->cancel();
  REQUIRE(eventually([&] { return calls.dropped("b"); }));
  CHECK(calls.admission.queued() == 1);
  calls.finish("a");
  CHECK(calls.started("c"));
  CHECK_FALSE(calls.started("b"));
  calls.finish("c");
}

TEST_CASE("a queued call whose deadline passes is dropped, told what it waited for") {
  Calls calls({1, 1, 4});
  calls.submit("a");
  calls.control("b")->set_deadline(std::chrono::steady_clock::now() + 100ms);
  REQUIRE(calls.submit("b").verdict == CallAdmission::Verdict::queued);
  REQUIRE(eventually([&] { return calls.dropped("b"); }));
  CHECK(calls.control("b")->expired());
  CHECK(calls.busy("b") == "1 calls running (--max-calls 1)");
  CHECK(calls.admission.queued() == 0);
  calls.finish("a");
  CHECK_FALSE(calls.started("b"));
}

TEST_CASE("a place is held while any copy of it is: an abandoned run keeps counting") {
  Calls calls({1, 1, 4});
  calls.submit("a");
  std::shared_ptr<const CallPlace> abandoned;
  {
    std::lock_guard lock(calls.mutex);
    abandoned = calls.records["a"].place;  // the handler thread still has it
  }
  calls.finish("a");  // the call was answered (timed out)
  calls.submit("b");
  CHECK_FALSE(calls.started("b"));
  CHECK(calls.admission.running() == 1);
  abandoned.reset();  // the handler has really stopped
  CHECK(calls.started("b"));
  calls.finish("b");
}

TEST_CASE("closing drops the queued calls and refuses new ones") {
  Calls calls({1, 1, 4});
  calls.submit("a");
  calls.submit("b");
  calls.admission.close();
  CHECK(calls.dropped("b"));
  CHECK_FALSE(calls.control("b")->stop_requested());  // dropped for the close, not for itself
  CHECK(calls.submit("c").verdict == CallAdmission::Verdict::refused);
  calls.finish("a");  // a place freed after the close only counts
  CHECK_FALSE(calls.started("b"));
  CHECK(calls.admission.running() == 0);
}

TEST_CASE("a start that frees its place at once lets the queue go on, without recursion") {
  // As when the call cannot get a thread: its place goes back during start.
  CallAdmission admission({1, 1, 1000, 1000});
  std::shared_ptr<const CallPlace> first;
  CallAdmission::Call blocker;
  blocker.session = "s";
  blocker.control = std::make_shared<CallControl>();
  blocker.start = [&](std::shared_ptr<const CallPlace> place) { first = std::move(place); };
  blocker.drop = [](const std::string&) {};
  REQUIRE(admission.submit(std::move(blocker)).verdict == CallAdmission::Verdict::started);
  // Atomic, and waited for: the queue watch may be pumping too when `first`
  // goes, and then it starts the rest (ThreadSanitizer saw the race).
  std::atomic<int> started = 0;
  for (int i = 0; i < 1000; ++i) {
    CallAdmission::Call call;
    call.session = "s";
    call.control = std::make_shared<CallControl>();
    call.start = [&started](std::shared_ptr<const CallPlace>) { ++started; };
    call.drop = [](const std::string&) {};
    REQUIRE(admission.submit(std::move(call)).verdict == CallAdmission::Verdict::queued);
  }
  first.reset();
  // Well under the 50 s the watch's polls alone would take for 1000 calls.
  CHECK(eventually([&] { return started == 1000; }));
  CHECK(eventually([&] { return admission.running() == 0 && admission.queued() == 0; }));
}

TEST_CASE("has_room says whether a call would be admitted, and on_room tells when room frees") {
  Calls calls({1, 1, 1, 1});
  std::atomic<int> told{0};
  calls.admission.on_room([&] { ++told; });
  CHECK(calls.admission.has_room("s1"));
  CHECK(calls.submit("a").verdict == CallAdmission::Verdict::started);
  CHECK(calls.admission.has_room("s1"));  // the queue has a place
  CHECK(calls.submit("b").verdict == CallAdmission::Verdict::queued);
  CHECK_FALSE(calls.admission.has_room("s1"));
  CHECK_FALSE(calls.admission.has_room(""));  // the queue is full for everyone

  // The end of a call tells on its own thread: b starts, the queue is empty.
  const int before_end = told;
  calls.finish("a");
  CHECK(told > before_end);
  CHECK(calls.started("b"));
  CHECK(calls.admission.has_room("s1"));

  // A queued call that is cancelled leaves room too, told by the queue watch.
  CHECK(calls.submit("c").verdict == CallAdmission::Verdict::queued);
  CHECK_FALSE(calls.admission.has_room("s1"));
  const int before_cancel = told;
  calls.control("c")->cancel();
  REQUIRE(eventually([&] { return calls.dropped("c"); }));
  CHECK(eventually([&] { return told > before_cancel; }));
  CHECK(calls.admission.has_room("s1"));

  calls.admission.on_room(nullptr);
  const int before_removed = told;
  calls.finish("b");
  CHECK(told == before_removed);
  calls.admission.close();
  CHECK_FALSE(calls.admission.has_room("s1"));
}
