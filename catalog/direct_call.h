// Calling a registered tool in-process, for a program built on the library
// (its tests, a tool that uses another): the argument check every tools/call
// passes (catalog/argument_check.h: the JSON boundary, the input schema, its
// defaults), then the handler on the calling thread, timed. Nothing of the
// server's pipeline runs (no aliases, policy, confirmation, journal, result
// limits or records): that is what a client's call through toolmux gets.
//
// The caller chooses how a failure comes back: as an isError result, as a
// client would see it (FailureMode::result), or as a ToolCallFailed exception
// (FailureMode::raise), for code that would rather not look at is_error after
// each call. A failure is arguments the schema refuses, a handler that throws
// (MissingClientCapability passes through as it is, in both modes), or a
// result that says isError. Safe from any number of threads when the tool's
// handler is (handlers must be: catalog/tool.h).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

#include "catalog/tool.h"
#include "catalog/tool_registry.h"

namespace toolmux {

enum class FailureMode {
  result,  // a failure is an isError result (the default)
  raise,   // a failure throws ToolCallFailed
};

// What a direct call returned, and how long it took from the argument check
// to the handler's return.
struct DirectCallResult {
  ToolResult result;
  std::chrono::nanoseconds duration{0};
};

// A direct call's failure in FailureMode::raise: what() is the failure's
// message (the result's text); result() the isError result FailureMode::result
// would have returned; duration() as DirectCallResult's.
class ToolCallFailed : public std::runtime_error {
 public:
  ToolCallFailed(const std::string& message, ToolResult result, std::chrono::nanoseconds duration);
  const ToolResult& result() const { return result_; }
  std::chrono::nanoseconds duration() const { return duration_; }

 private:
  ToolResult result_;
  std::chrono::nanoseconds duration_;
};

// Calls `tool` with `arguments_json` (as a client sends them; empty = {}) in
// `context`, whose deadline and cancellation the handler sees.
DirectCallResult call_registered_tool(const RegisteredTool& tool, std::string_view arguments_json,
                                      CallContext& context, FailureMode mode = FailureMode::result);

// The same in a context of its own: its deadline is the tool's timeout from
// now; it is never cancelled; progress and log messages go nowhere; asking the
// client answers an error.
DirectCallResult call_registered_tool(const RegisteredTool& tool, std::string_view arguments_json,
                                      FailureMode mode = FailureMode::result);

}  // namespace toolmux
