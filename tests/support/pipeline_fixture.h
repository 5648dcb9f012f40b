// A call pipeline over the test tools (tests/support/test_tools.h), with a
// session that captures what it is sent, for tests of the pipeline's stages;
// and StubNext, a stand-in for the rest of the chain, for tests that drive one
// stage alone.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "src/pipeline/call_pipeline.h"
#include "src/session/call_context.h"
#include "tests/support/test_tools.h"

namespace toolmux::testing {

// The rest of the chain behind a stage under test: counts the calls it gets,
// keeps a copy of the last one, and answers with `answer` (by default what
// the echo tool would say, "next").
struct StubNext {
  int calls = 0;
  std::optional<ToolCall> seen;
  std::function<CallResult(ToolCall&)> answer = [](ToolCall&) {
    return CallResult::answered(ToolResult::text("next"));
  };
  CallHandler handler() {
    return [this](ToolCall& call) {
      ++calls;
      seen = call;
      return answer(call);
    };
  }
};

struct PipelineFixture {
  std::shared_ptr<Catalog> catalog = make_test_catalog();
  CapturingSink sink;
  std::shared_ptr<Session> session =
      std::make_shared<Session>("test-session", "local", "test", sink);
  std::FILE* log_file = std::tmpfile();
  Logger logger{log_file, LogLevel::debug};
  Metrics metrics;
  std::shared_ptr<RunningHandlers> running = std::make_shared<RunningHandlers>();
  // Where offloaded results go: set `results` before building the pipeline.
  std::shared_ptr<LazyResultStore> results;
  CallHandler pipeline = build_call_pipeline(logger, metrics, running, nullptr);

  // Rebuilds the pipeline after `results` changed.
  void rebuild() { pipeline = build_call_pipeline(logger, metrics, running, results); }

  ~PipelineFixture() {
    // Handler threads the deadline stage let go of must stop before the
    // catalog and the store go away.
    running->wait_until_idle(std::chrono::seconds(5));
    std::fclose(log_file);
  }

  ToolCall make_call(const std::string& tool, const std::string& arguments_json) {
    ToolCall call;
    call.session_id = session->id();
    call.session_label = session->label();
    call.principal = session->principal();
    call.requested_name = tool;
    call.catalog = catalog;
    call.raw_arguments = parse_untrusted_json(arguments_json);
    call.control = std::make_shared<CallControl>();
    call.context = std::make_shared<SessionCallContext>(session, call.control, 1, nullptr, "test");
    return call;
  }

  // A call as the stages before the one under test leave it: its tool
  // resolved (resolve_tool), and with `checked` its arguments set as given
  // (check_arguments).
  ToolCall resolved_call(const std::string& tool, const std::string& arguments_json,
                         bool checked = false) {
    ToolCall call = make_call(tool, arguments_json);
    call.tool = catalog->registry->find(tool);
    if (checked) call.arguments = call.raw_arguments.value;
    return call;
  }

  std::string log_text() {
    std::fflush(log_file);
    std::rewind(log_file);
    std::string text;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, log_file)) text.append(buf, n);
    return text;
  }
};

// The text of content block `i` of a call's result.
inline std::string text_at(const CallResult& r, std::size_t i = 0) {
  return r.result.content.at(i).at("text");
}

// The raw arguments of a call of the echo tool.
inline std::string echo_args(const std::string& text) {
  return nlohmann::json{{"text", text}}.dump();
}

}  // namespace toolmux::testing
