// What a tool is: its spec (the contract a provider declares), the result it
// returns, and the context its handler runs in.
//
// A ToolSpec is plain data and may break the contract; ToolRegistry::add
// (tool_registry.h) is where it is checked. Handlers are called concurrently
// from several threads and must not assume otherwise.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/log_level.h"
#include "src/base/personal_data.h"

namespace toolmux {

class StoreTransaction;  // catalog/store_transaction.h

using nlohmann::json;

enum class SideEffect { read_only, local_mutation, remote_mutation, destructive };

// Whether a call of the tool may become a task (the io.modelcontextprotocol/tasks
// extension, docs/tasks.md), as tools/list says in execution.taskSupport:
// never (forbidden), when the client negotiated the extension (optional), or
// only then: a client that did not is refused with -32021 (required).
enum class TaskSupport { forbidden, optional, required };

// "read_only" -> SideEffect::read_only, ...; nullopt for any other text.
std::optional<SideEffect> side_effect_from_name(std::string_view name);
std::string_view side_effect_name(SideEffect effect);

struct ToolSpec {
  std::string name;
  std::string title;  // optional; "" = none
  std::string description;
  json input_schema;        // null = missing (refused at registration)
  json output_schema;       // null = none
  std::string side_effect;  // one of the four SideEffect names; anything else is refused
  std::chrono::milliseconds timeout{0};  // must be > 0
  bool idempotent = false;               // sets annotations.idempotentHint
  // The handler returns by its deadline on its own: it does not block, or it
  // returns once context.cancelled() turns true (the deadline passing does
  // that), as a command tool does by killing its process. Such a tool runs on
  // the thread that carries its call. Any other runs on a thread of its own,
  // which the call stops waiting for at the deadline.
  bool returns_by_deadline = false;
  // The handler answers within microseconds and never waits: no I/O that can
  // block, no lock held for long, nothing asked of the client. The stdio
  // reader then runs a call of it itself, with no hand-off to a call thread
  // (pings and cancellations wait behind it for that long). Needs
  // returns_by_deadline and side_effect "read_only" (a mutation is journaled
  // and may ask for confirmation). Each built-in says which it is.
  bool runs_on_reader = false;
  // Whether its calls may become tasks. A call of a client that negotiated
  // the extension becomes one when its handler starts: the client is answered
  // with the task, and the handler goes on (on a call thread; runs_on_reader
  // is refused with it). Unless task_started_by_handler: then the handler says
  // when (CallContext::start_task), and returns a plain answer until it does
  // (one that asks the client first, say).
  TaskSupport task_support = TaskSupport::forbidden;
  bool task_started_by_handler = false;
  // Its results are data from outside toolmux that may carry instructions
  // meant for the model (a web page, an e-mail, an upstream's answer): the
  // spotlight stage wraps their text in markers that say so
  // (src/pipeline/spotlight.h).
  bool untrusted_output = false;
  // The classes of personal data (src/base/personal_data.h) the
  // redact_result stage hides in its results, beside secrets: none unless the
  // operator turns them on (the catalog file's "redactPersonalData").
  PersonalDataClasses redact_personal_data;
  // Its schemas are toolmux's own, and a unit test compiles every one
  // (tests/src/assembly/tool_catalog_test.cpp): registration checks the rest
  // of the contract and leaves compiling them to the tool's first call, so
  // that start-up does not wait for it. Only toolmux's built-in tools set it;
  // every other tool's schemas compile at registration, where a schema that
  // does not is refused with the reason.
  bool schemas_vetted = false;
  // annotations.openWorldHint as the tool declares it; nullopt = from its
  // class (true for remote_mutation). Upstream tools keep the upstream's.
  std::optional<bool> open_world;
  std::vector<std::string> tags;
  std::string version;  // optional
};

// What the client answered to a request the server sent it while serving a
// call (elicitation, sampling, roots): its result, or why there is none.
struct ClientAnswer {
  std::optional<json> result;
  std::string error;  // set when there is no result: the client's error, a timeout, ...
  // No result yet, and none will come during this run of the call: the client
  // speaks the 2026-07-28 protocol, where the question goes back in the call's
  // answer (an input_required result) and the client retries the call with
  // its answer (MRTR). The call is stopped (CallContext::cancelled() turns
  // true); what the handler returns now is discarded, and the retry runs it
  // again from the start, when this ask_client returns the answer at once.
  bool pending = false;
  // A 2026-07-28 answer: the id of the question it answers in the
  // requestState it came back with, the same each time that state and answer
  // are sent, new in each round's state. Whoever acts on an answer only once
  // (a confirmation lets its tool run once) refuses an id it has seen. Empty
  // for an answer a client gave live (legacy elicitation), which cannot come
  // again.
  std::string answer_id{};
};

// The handler's view of the call it serves. Implemented by the server; every
// method may be called from the handler's thread at any time during the call
// and does nothing harmful after the call has ended.
class CallContext {
 public:
  virtual ~CallContext() = default;
  // True once the client cancelled the call or its deadline passed. A handler
  // that loops or waits checks it and returns early; what it returns then is
  // discarded.
  virtual bool cancelled() const = 0;
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
  // Stops when the call is cancelled or aborted (not when its deadline
  // passes: wait until deadline() for that), for a handler that waits on
  // something else and would rather be woken than look at cancelled() now and
  // then. The default cannot stop: such a handler must look.
  virtual std::stop_token stop_token() const { return {}; }
  // Sends notifications/progress when the request carried a progress token;
  // otherwise does nothing. `progress` must increase from call to call.
  virtual void report_progress(double progress, std::optional<double> total,
                               std::string_view message) = 0;
  // Sends notifications/message when `level` is at or above the client's level.
  virtual void log(LogLevel level, const json& data) = 0;
  // Whether log(level, ...) would send anything: a caller that builds its data
  // for nothing asks first. The default says yes.
  virtual bool logs(LogLevel /*level*/) const { return true; }
  // The session the call came from: state a tool keeps per session (such as
  // offloaded results) is keyed by it. Unguessable; "" outside a session.
  virtual const std::string& session_id() const {
    static const std::string none;
    return none;
  }
  // Tools a search found for this caller: with discovery on they join the
  // session's tool list (and the client is told the list changed).
  virtual void tools_discovered(const std::vector<std::string>& /*names*/) {}
  // Who is calling, for the operator's access rules ("local" over stdio).
  virtual const std::string& principal() const {
    static const std::string none;
    return none;
  }
  // The capabilities the client declared at initialize ({} when unknown):
  // ask_client may only use what is there ("elicitation", "sampling", ...).
  virtual json client_capabilities() const { return json::object(); }
  // Asks the client (e.g. "elicitation/create", "sampling/createMessage",
  // "roots/list"). A legacy-era client gets a request on the call's own stream
  // and the call waits for the answer, at most until its deadline, its
  // cancellation, or `stop` (a relay gives up once what it relays for has
  // ended). A 2026-07-28 client gets the question in an input_required result
  // (see ClientAnswer::pending): a handler that asks must do nothing it could
  // not do twice before its last question. `key` names the question among the
  // call's questions ("" = "input-N", N counting this run's questions from 1);
  // a handler that asks several questions at once asks them all before it
  // looks at the answers, so that they go to the client together.
  virtual ClientAnswer ask_client(const std::string& method, const json& /*params*/,
                                  const std::stop_token& /*stop*/ = {},
                                  const std::string& /*key*/ = {}) {
    return {std::nullopt, "this call cannot send " + method + " to the client", false};
  }
  // Makes the call a task now, when its tool supports tasks and its client
  // negotiated them (ToolSpec::task_support): the client is answered with the
  // task at once, and what the handler returns becomes the task's result.
  // From then on ask_client's questions wait in the task (input_required)
  // for the client's tasks/update, in either protocol era. Returns whether the
  // call is a task (now or already); false changes nothing.
  virtual bool start_task() { return false; }
  // Asks the transport to close the connection that carries this call's
  // messages now; the client reconnects and gets the rest (Streamable HTTP's
  // SSE polling, for long calls behind proxies). Does nothing on stdio.
  virtual void release_stream() {}
  // toolmux's id of this call, as its journal and audit trail know it ("" =
  // none). A call repeated with the same idempotency key after an earlier one
  // did not finish (it was interrupted, timed out, ...) has the earlier one's
  // id, so a tool that records its work can recognise its own earlier attempt.
  // Command tools get it in $TOOLMUX_CALL_ID, upstreams in _meta
  // "io.toolmux/callId".
  const std::string& call_id() const { return call_id_; }
  // Set by the server before the handler runs; not while it runs.
  void set_call_id(std::string id) { call_id_ = std::move(id); }
  // The transaction of toolmux's store the tool's change commits in with the
  // call's outcome and audit record (catalog/store_transaction.h); null when
  // the store lends none (the embedded store, a read_only tool, journaling
  // off).
  StoreTransaction* store_transaction() const { return store_transaction_.get(); }
  // Set by the journal stage before the handler runs; not while it runs.
  void set_store_transaction(std::shared_ptr<StoreTransaction> transaction) {
    store_transaction_ = std::move(transaction);
  }

 private:
  std::string call_id_;
  std::shared_ptr<StoreTransaction> store_transaction_;
};

// A tools/call result as MCP defines it (CallToolResult).
struct ToolResult {
  json content = json::array();  // content blocks: {"type":"text","text":...}, ...
  json structured_content;       // null = none
  bool is_error = false;
  // The result's _meta, written only when it is an object. Set by toolmux
  // (e.g. "io.toolmux/outcome" on error results), not taken from upstreams.
  json meta;
  // The error is toolmux's words, not the tool's (an upstream that gave no
  // usable answer): never marked as untrusted data. Not sent.
  bool from_toolmux = false;

  static ToolResult text(std::string text);
  static ToolResult error(std::string message);  // is_error with one text block
  json to_json() const&;
  // The same, taking the blocks instead of copying them (a large result's text
  // is not held twice on its way out).
  json to_json() &&;
};

// Thrown by a handler that cannot serve its call without client capabilities
// the client did not declare (CallContext::client_capabilities()): the call is
// answered with the JSON-RPC error -32021 (MissingRequiredClientCapability,
// 2026-07-28) whose data.requiredCapabilities is `missing`, e.g.
// {"sampling": {}}, in either protocol era. A handler that can do without the
// capability should rather do without it (ask_client answers with an error).
class MissingClientCapability : public std::runtime_error {
 public:
  // `message` says what happened, for a legacy-era client (which gets it as
  // the tool's error); "" = "the client did not declare the capabilities ...".
  explicit MissingClientCapability(json missing, const std::string& message = "");
  const json& missing() const { return missing_; }

 private:
  json missing_;
};

// Throws MissingClientCapability naming those of `required`'s capabilities
// (an object: {"sampling": {}, "elicitation": {}}) that the client of
// `context` did not declare; returns when it declared them all.
void require_client_capabilities(const CallContext& context, const json& required);

// Runs a tool on arguments that already passed the argument check. May throw:
// the call pipeline turns an exception into an isError result, except
// MissingClientCapability (above).
using ToolHandler = std::function<ToolResult(const json& arguments, CallContext& context)>;

}  // namespace toolmux
