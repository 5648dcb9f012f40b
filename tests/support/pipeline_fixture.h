// A call pipeline over the test tools (tests/support/test_tools.h), with a
// session that captures what it is sent, for tests of the pipeline's stages.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "src/pipeline/call_pipeline.h"
#include "src/session/call_context.h"
#include "tests/support/test_tools.h"

namespace toolmux::testing {

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

  std::string log_text() {
    std::fflush(log_file);
    std::rewind(log_file);
    std::string text;
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, log_file)) text.append(buf, n);
    return text;
  }
};

}  // namespace toolmux::testing
