// toolmux-hooks-example: toolmux as a library, with hooks around every call
// (toolmux::CallHooks) and a native tool that needs a credential
// (toolmux::NativeTool::credentials). What it shows:
//
// - a before hook that refuses a call (greet "mallory"), rewrites its
//   arguments (a name with spaces around it is trimmed; "nobody" becomes a
//   number, which the tool's schema refuses when toolmux checks the rewrite)
//   or throws (greet "boom": the client gets an isError result naming the
//   hook, and the server goes on);
// - a middleware that runs a call of `flaky` again when its first answer is
//   an error;
// - an after hook that appends one JSON line per call (tool, outcome, sizes,
//   duration, truncated, offloaded) to the file named by the environment
//   variable TOOLMUX_HOOKS_LOG (none: it writes nothing);
// - `whoami`, which needs the credential "api_token", read by toolmux from
//   the environment variable HOOKS_EXAMPLE_TOKEN: without it the server
//   refuses to start, naming the variable. toolmux redacts its value wherever
//   it would leave (results, logs, the audit), so the tool shows only its
//   length and its last four characters, and the copy it echoes comes out as
//   [REDACTED].
//
//   HOOKS_EXAMPLE_TOKEN=... toolmux-hooks-example serve
//
// - `add_note`, which keeps its notes in toolmux's PostgreSQL database
//   (serve --store postgresql), in the transaction toolmux lends it
//   (CallContext::store_transaction()): a note commits with its call's
//   outcome and audit record, and a call that crashes keeps nothing.
//
// Tested end to end by tests/e2e/hooks_example.test.mjs.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/app/toolmux.h"

namespace {

using toolmux::AfterCall;
using toolmux::BeforeDecision;
using toolmux::CallContext;
using toolmux::CallNext;
using toolmux::HookedCall;
using toolmux::json;
using toolmux::NativeTool;
using toolmux::ToolResult;

json object_schema(json properties, json required) {
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

NativeTool tool(std::string name, std::string description, json schema) {
  NativeTool t;
  t.spec.name = std::move(name);
  t.spec.description = std::move(description);
  t.spec.input_schema = std::move(schema);
  t.spec.side_effect = "read_only";
  t.spec.timeout = std::chrono::seconds(10);
  return t;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<NativeTool> example_tools() {
  std::vector<NativeTool> tools;
  NativeTool greet = tool(
      "greet", "Greets someone by name.",
      object_schema(
          {{"name", {{"type", "string"}, {"minLength", 1}, {"description", "Whom to greet."}}}},
          {"name"}));
  greet.handler = [](const json& arguments, CallContext&) {
    return ToolResult::text("Hello, " + arguments["name"].get<std::string>() + "!");
  };
  tools.push_back(std::move(greet));

  NativeTool repeat =
      tool("repeat", "Repeats a text a number of times.",
           object_schema({{"text", {{"type", "string"}, {"description", "The text to repeat."}}},
                          {"times",
                           {{"type", "integer"},
                            {"minimum", 1},
                            {"maximum", 100000},
                            {"description", "How many times."}}}},
                         {"text", "times"}));
  repeat.handler = [](const json& arguments, CallContext&) {
    std::string out;
    const auto times = arguments["times"].get<int>();
    for (int i = 0; i < times; ++i) out += arguments["text"].get<std::string>();
    return ToolResult::text(out);
  };
  tools.push_back(std::move(repeat));

  // Fails every other call: the middleware's retry makes it answer.
  NativeTool flaky =
      tool("flaky", "Fails every other call.", object_schema(json::object(), json::array()));
  flaky.handler = [attempts = std::make_shared<std::atomic<int>>(0)](const json&, CallContext&) {
    if ((*attempts)++ % 2 == 0) return ToolResult::error("try again");
    return ToolResult::text("worked");
  };
  tools.push_back(std::move(flaky));

  NativeTool whoami = tool("whoami", "Says which API token this server calls with.",
                           object_schema(json::object(), json::array()));
  whoami.credentials = {{"api_token", "HOOKS_EXAMPLE_TOKEN", {}}};
  whoami.with_credentials = [](const toolmux::Credentials& credentials) -> toolmux::ToolHandler {
    const std::string token = credentials.at("api_token");
    return [token](const json&, CallContext&) {
      ToolResult r = ToolResult::text(
          "a token of " + std::to_string(token.size()) + " characters, ending in " +
          token.substr(token.size() - std::min<std::size_t>(4, token.size())));
      // A careless line: toolmux redacts the token on its way out.
      r.content.push_back({{"type", "text"}, {"text", "the token is " + token}});
      return r;
    };
  };
  tools.push_back(std::move(whoami));

  // Keeps a note in toolmux's own PostgreSQL database, in the transaction
  // toolmux lends it: the note commits with the call's outcome and audit
  // record, or not at all. Keyed by the call id, so that a retry of an
  // attempt that did commit adds nothing.
  NativeTool add_note = tool("add_note",
                             "Keeps a note, committed with the call's audit record. Needs serve "
                             "--store postgresql.",
                             object_schema({{"note",
                                             {{"type", "string"},
                                              {"description",
                                               "What to keep. \"crash\" "
                                               "makes the tool throw after "
                                               "writing it."}}}},
                                           {"note"}));
  add_note.spec.side_effect = "local_mutation";
  add_note.handler = [](const json& arguments, CallContext& context) {
    toolmux::StoreTransaction* store = context.store_transaction();
    if (!store) {
      return ToolResult::error(
          "add_note keeps its notes in toolmux's PostgreSQL store: serve with --store postgresql");
    }
    const std::string note = arguments["note"].get<std::string>();
    auto table = store->exec(
        "CREATE TABLE IF NOT EXISTS hooks_example_notes (call_id text PRIMARY KEY, note text)");
    if (!table.ok()) return ToolResult::error("add_note: " + table.message());
    auto kept = store->exec(
        "INSERT INTO hooks_example_notes VALUES ($1, $2) ON CONFLICT (call_id) DO NOTHING",
        {context.call_id(), note});
    if (!kept.ok()) return ToolResult::error("add_note: " + kept.message());
    if (note == "crash") throw std::runtime_error("the pen broke after writing");
    return ToolResult::text("kept: " + note);
  };
  tools.push_back(std::move(add_note));
  return tools;
}

BeforeDecision before(const HookedCall& call) {
  if (call.tool != "greet") return BeforeDecision::proceed();
  const std::string name = call.arguments["name"].get<std::string>();
  if (name == "mallory") return BeforeDecision::refuse("mallory is not welcome here");
  if (name == "boom") throw std::runtime_error("the guest list is unreadable");
  if (name == "nobody") return BeforeDecision::rewrite({{"name", 0}});
  if (trimmed(name) != name) return BeforeDecision::rewrite({{"name", trimmed(name)}});
  return BeforeDecision::proceed();
}

ToolResult retry_once(const HookedCall& call, const CallNext& next) {
  ToolResult first = next();
  if (call.tool != "flaky" || !first.is_error) return first;
  return next();
}

// Appends each call's AfterCall to TOOLMUX_HOOKS_LOG, one JSON object a line.
class AfterLog {
 public:
  explicit AfterLog(const char* path) {
    if (path) out_.open(path, std::ios::app);
  }
  void operator()(const AfterCall& call) {
    if (!out_.is_open()) return;
    const json line = {{"tool", call.call.tool},
                       {"outcome", call.outcome},
                       {"isError", call.is_error},
                       {"durationUs", call.duration.count()},
                       {"bytesProduced", call.bytes_produced},
                       {"bytesReturned", call.bytes_returned},
                       {"truncated", call.truncated},
                       {"offloaded", call.offloaded}};
    std::lock_guard lock(mutex_);
    out_ << line.dump() << std::endl;
  }

 private:
  std::mutex mutex_;
  std::ofstream out_;
};

}  // namespace

int main(int argc, char** argv) {
  auto log = std::make_shared<AfterLog>(std::getenv("TOOLMUX_HOOKS_LOG"));
  toolmux::NativeProviders providers;
  providers.hooks.before = before;
  providers.hooks.middleware = retry_once;
  providers.hooks.after = [log](const AfterCall& call) { (*log)(call); };
  const int code = toolmux::run_toolmux({argv + 1, argv + argc}, example_tools(), providers);
  std::fflush(nullptr);
  _exit(code);
}
