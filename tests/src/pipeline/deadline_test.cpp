// The deadline stage: the rest of the chain on its own thread, until it
// finishes, the call is cancelled or aborted, or the tool's timeout passes;
// on the carrying thread for a tool that returns by its deadline.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "src/pipeline/deadline.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// A stand-in for a tool that runs until its call says stop.
CallResult until_stopped(ToolCall& call) {
  while (!call.control->stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return CallResult::answered(ToolResult::text("stopped late"));
}

// Runs `handler` on `call` while another thread, 50 ms in, stops the call with
// `stop` (&CallControl::cancel or &CallControl::abort).
CallResult run_stopped_by(void (CallControl::*stop)(), const CallHandler& handler, ToolCall& call) {
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    (call.control.get()->*stop)();
  });
  CallResult result = handler(call);
  stopper.join();
  return result;
}

}  // namespace

TEST_CASE("deadline runs next on another thread and returns its answer") {
  PipelineFixture f;
  StubNext next;
  std::thread::id ran_on;
  next.answer = [&ran_on](ToolCall&) {
    ran_on = std::this_thread::get_id();
    return CallResult::answered(ToolResult::text("done"));
  };
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::deadline(f.running)(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(text_at(r) == "done");
  CHECK(ran_on != std::this_thread::get_id());
  // The call's deadline is set from when it was received.
  CHECK(call.control->deadline() == call.received + std::chrono::milliseconds(2000));
}

TEST_CASE("deadline answers a cancelled call at once, and an aborted one as stopped") {
  PipelineFixture f;
  StubNext next;
  next.answer = until_stopped;
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r =
      run_stopped_by(&CallControl::cancel, stages::deadline(f.running)(next.handler()), call);
  CHECK(r.outcome == CallOutcome::cancelled);
  CHECK(f.running->wait_until_idle(std::chrono::seconds(5)));

  StubNext after;
  after.answer = until_stopped;
  ToolCall aborted = f.resolved_call("echo", "{}");
  CallResult s =
      run_stopped_by(&CallControl::abort, stages::deadline(f.running)(after.handler()), aborted);
  CHECK(s.outcome == CallOutcome::stopped);
  CHECK(text_at(s) == "Tool \"echo\" was stopped before it finished: toolmux is exiting");
  CHECK(f.running->wait_until_idle(std::chrono::seconds(5)));
}

TEST_CASE("deadline without a resolved tool is an internal error naming resolve_tool") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.make_call("echo", "{}");
  CallResult r = stages::deadline(f.running)(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::internal_error);
}

TEST_CASE("a tool that runs past its timeout gives 'timed out after N ms' promptly") {
  PipelineFixture f;
  ToolCall call = f.make_call("slow", R"({"ms":5000})");
  const auto start = Clock::now();
  CallResult r = f.pipeline(call);
  const auto elapsed = Clock::now() - start;
  CHECK(r.outcome == CallOutcome::timed_out);
  CHECK(text_at(r) == "Tool \"slow\" timed out after 300 ms");
  CHECK(elapsed < std::chrono::seconds(2));
  // The abandoned handler was told to stop through its context, and stops.
  CHECK(call.context->cancelled());
  CHECK(f.running->wait_until_idle(std::chrono::seconds(1)));
}

TEST_CASE("a cancelled call ends early with the cancelled outcome") {
  PipelineFixture f;
  ToolCall call = f.make_call("slow", R"({"ms":5000})");
  const auto start = Clock::now();
  CallResult r = run_stopped_by(&CallControl::cancel, f.pipeline, call);
  CHECK(r.outcome == CallOutcome::cancelled);
  CHECK(Clock::now() - start < std::chrono::seconds(1));
}

namespace {

// The echo tool as a tool that says it returns by its deadline (a command
// tool, an upstream's, a built-in), with a timeout of 300 ms.
RegisteredTool on_time(const PipelineFixture& f) {
  RegisteredTool tool = *f.catalog->registry->find("echo");
  tool.spec.returns_by_deadline = true;
  tool.spec.timeout = std::chrono::milliseconds(300);
  return tool;
}

}  // namespace

TEST_CASE("a tool that returns by its deadline runs on the carrying thread") {
  PipelineFixture f;
  const RegisteredTool tool = on_time(f);
  StubNext next;
  std::thread::id ran_on;
  next.answer = [&ran_on](ToolCall&) {
    ran_on = std::this_thread::get_id();
    return CallResult::answered(ToolResult::text("done"));
  };
  ToolCall call = f.make_call("echo", "{}");
  call.tool = &tool;
  CallResult r = stages::deadline(f.running)(next.handler())(call);
  CHECK(text_at(r) == "done");
  CHECK(ran_on == std::this_thread::get_id());
  CHECK(call.control->deadline() == call.received + std::chrono::milliseconds(300));
  CHECK(f.running->wait_until_idle(std::chrono::seconds(0)));
}

TEST_CASE("a tool that returns by its deadline times out at it, and may be cancelled or aborted") {
  PipelineFixture f;
  const RegisteredTool tool = on_time(f);
  StubNext next;
  next.answer = until_stopped;  // returns once its deadline or a cancel says stop
  ToolCall call = f.make_call("echo", "{}");
  call.tool = &tool;
  const auto start = Clock::now();
  CallResult r = stages::deadline(f.running)(next.handler())(call);
  CHECK(r.outcome == CallOutcome::timed_out);
  CHECK(text_at(r) == "Tool \"echo\" timed out after 300 ms");
  CHECK(Clock::now() - start < std::chrono::seconds(2));

  ToolCall cancelled = f.make_call("echo", "{}");
  cancelled.tool = &tool;
  CallResult c =
      run_stopped_by(&CallControl::cancel, stages::deadline(f.running)(next.handler()), cancelled);
  CHECK(c.outcome == CallOutcome::cancelled);

  ToolCall aborted = f.make_call("echo", "{}");
  aborted.tool = &tool;
  CallResult s =
      run_stopped_by(&CallControl::abort, stages::deadline(f.running)(next.handler()), aborted);
  CHECK(s.outcome == CallOutcome::stopped);
}
