// What a program that embeds toolmux adds to the catalog: tools, resources and
// prompts implemented in C++, and hooks around every call (src/app/toolmux.h
// runs toolmux with them). Plain data; the handlers, providers and hooks are
// called from many threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catalog/prompt_provider.h"
#include "catalog/resource_provider.h"
#include "catalog/store_transaction.h"
#include "catalog/tool.h"

namespace toolmux {

// A credential a native tool needs, by name, and where toolmux reads it: a
// variable of toolmux's environment or a file (its trailing newline dropped;
// a relative path is from the working directory), exactly one of the two, as
// an upstream's {"fromEnv": ...} and {"fromFile": ...} (docs/upstreams.md).
struct NativeCredential {
  std::string name;  // what the tool's handler looks it up by
  std::string from_env;
  std::filesystem::path from_file;
};

// A native tool's credentials as toolmux read them, by NativeCredential::name.
using Credentials = std::map<std::string, std::string, std::less<>>;

// A tool implemented in C++ by a program that embeds toolmux (src/app/toolmux.h).
struct NativeTool {
  ToolSpec spec;
  ToolHandler handler;
  // The credentials the tool needs. toolmux reads them each time it loads
  // its catalog (start, reload), remembers each value as a secret (never in
  // a result, a log line or the audit: src/base/redact.h), and registers the
  // handler `with_credentials` returns for them instead of `handler`. One
  // that cannot be read (no such variable, no such file) is a problem at
  // "/native/<index>/credentials/<i>": serve refuses to start (a reload, to
  // load), naming it but never a value.
  std::vector<NativeCredential> credentials;
  std::function<ToolHandler(const Credentials&)> with_credentials;
};

// A call as the hooks see it (CallHooks), whatever tool it reaches: native,
// command or upstream.
struct HookedCall {
  std::string tool;          // the tool's name in the catalog (an alias resolved)
  nlohmann::json arguments;  // as checked against the tool's schema, defaults filled
  std::string principal;     // whom the access rules applied to
  std::string call_id;       // toolmux's id of the call, as in its audit record
};

// What a before hook decides about a call.
struct BeforeDecision {
  enum class Kind { proceed, refuse, rewrite };
  // Run the call as it is.
  static BeforeDecision proceed() { return {}; }
  // Do not run it: the client gets an isError result (outcome "denied"),
  // "Tool \"name\" was refused by the before hook: <reason>".
  static BeforeDecision refuse(std::string reason) { return {Kind::refuse, std::move(reason), {}}; }
  // Run it with `arguments` instead, checked first like the client's: against
  // the operator's fixed values and the tool's input schema (a failure is an
  // invalid_arguments isError result, and the tool does not run).
  static BeforeDecision rewrite(nlohmann::json arguments) {
    return {Kind::rewrite, {}, std::move(arguments)};
  }

  Kind kind = Kind::proceed;
  std::string reason;        // refuse
  nlohmann::json arguments;  // rewrite
};

// What an after hook learns of a call that ended, as its audit record has it.
struct AfterCall {
  HookedCall call;        // arguments null when the call ended before they were checked
  std::string outcome;    // "ok", "tool_error", "denied", "invalid_arguments", "timed_out", ...
  bool is_error = false;  // the result the client gets is an isError result
  std::chrono::microseconds duration{0};  // from the call's start to its answer
  std::size_t bytes_produced = 0;         // what the tool answered, before limits
  std::size_t bytes_returned = 0;         // what the client gets
  bool truncated = false;                 // the result was cut to the catalog's limit
  bool offloaded = false;                 // the whole result was stored for read_tool_result
};

// Runs the tool of `call` (and the rest of the pipeline behind it) once, and
// returns what it answered. A middleware may call it more than once (a retry)
// or not at all (the middleware answers instead), on its own thread only.
using CallNext = std::function<ToolResult()>;

// Hooks that every tools/call runs through, at fixed points of the call
// pipeline (src/pipeline/call_hooks.h):
// - `before`, once the arguments were checked and before anything else
//   decides on the call (confirmation, the journal, the tool's deadline):
//   proceed, refuse or rewrite its arguments;
// - `middleware`, around the tool itself, under its deadline and on the
//   thread it runs on: sees the call and wraps `next`; what it returns is the
//   tool's answer (a crash of the tool stays a crash);
// - `after`, once the result was limited and offloaded, with what the audit
//   records: duration, outcome, sizes, truncation, offload.
// Each may be empty. A hook that throws does not stop toolmux: the call is
// answered with an isError result (outcome "crashed") that names the hook,
// e.g. "Tool \"x\": the before hook failed: <what()>".
struct CallHooks {
  std::function<BeforeDecision(const HookedCall&)> before;
  std::function<ToolResult(const HookedCall&, const CallNext& next)> middleware;
  std::function<void(const AfterCall&)> after;
};

// Resources and prompts implemented in C++ by a program that embeds toolmux,
// in the order they are asked (catalog/provider_router.h), and the hooks
// every call runs through.
struct NativeProviders {
  std::vector<std::shared_ptr<ResourceProvider>> resources;
  std::vector<std::shared_ptr<PromptProvider>> prompts;
  CallHooks hooks;
};

}  // namespace toolmux
