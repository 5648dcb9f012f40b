// A 2026-07-28 confirmation lets its tool run once: the whole pipeline, with
// a real InputExchange per run (the client's question in an input_required
// result, its retry with the answer), refuses the same accepted retry sent
// again, through the same journal, another on the same data directory, or
// another instance's on the same PostgreSQL database.
// tests/e2e/guarded_mutations.test.mjs sends the retries over the wire.
#include <catch2/catch.hpp>

#include <atomic>

#include "src/pipeline/verify_confirmation.h"
#include "src/session/input_exchange.h"
#include "src/store/spent_tokens.h"
#include "tests/support/pipeline_fixture.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

const json kNote = {{"name", "todo.txt"}};

const json kYes = {
    {"action", "accept"},
    {"content", {{"approve", true}, {"approver", "Ada"}, {"rationale", "stale note"}}}};

// A 2026-07-28 client that can be asked (elicitation): its questions go to
// the run's InputExchange, and a question asked stops the call, as the
// server's context does.
class ModernClient : public TestContext {
 public:
  ModernClient(std::shared_ptr<InputExchange> exchange, std::shared_ptr<CallControl> control)
      : exchange_(std::move(exchange)), control_(std::move(control)) {}
  json client_capabilities() const override { return {{"elicitation", json::object()}}; }
  ClientAnswer ask_client(const std::string& method, const json& params, const std::stop_token&,
                          const std::string& key) override {
    ClientAnswer answer = exchange_->ask(method, params, key, client_capabilities());
    if (answer.pending) control_->request_input();
    return answer;
  }

 private:
  std::shared_ptr<InputExchange> exchange_;
  std::shared_ptr<CallControl> control_;
};

// delete_note (destructive, so confirmed), which counts its runs; and
// delete_colored (destructive too), which asks its client a color first and
// counts the runs that got that far.
struct ConfirmedFixture : PipelineFixture {
  std::shared_ptr<std::atomic<int>> runs = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<const SealingKey> key = std::make_shared<const SealingKey>(SealingKey::random());
  int calls = 0;

  ConfirmedFixture() {
    auto registry = make_test_registry();
    for (const char* name : {"delete_note", "delete_colored"}) {
      ToolSpec s = spec(name, object_schema({{"name", {{"type", "string"}}}}, {"name"}));
      s.side_effect = "destructive";
      const bool asks = std::string(name) == "delete_colored";
      auto counter = runs;
      REQUIRE(registry
                  ->add(s,
                        [counter, asks](const json&, CallContext& context) {
                          if (asks) {
                            ClientAnswer color =
                                context.ask_client("elicitation/create",
                                                   {{"message", "Which color?"},
                                                    {"requestedSchema", {{"type", "object"}}}},
                                                   {}, "color");
                            if (!color.result) return ToolResult::error("no color");
                          }
                          ++*counter;
                          return ToolResult::text("gone");
                        })
                  .empty());
    }
    catalog = make_test_catalog(registry);
    rebuild();
  }

  // Runs `tool` with `params` (requestState and inputResponses, or none)
  // through `through`; the question it ended with, if any, in `asked`.
  CallResult run(const CallHandler& through, const json& params, json* asked = nullptr,
                 const std::string& tool = "delete_note") {
    auto opened =
        InputExchange::open(params, RequestBinding{"local", "tools/call", tool, kNote}, key);
    REQUIRE(std::holds_alternative<std::shared_ptr<InputExchange>>(opened));
    auto exchange = std::get<std::shared_ptr<InputExchange>>(opened);
    ToolCall call = make_call(tool, kNote.dump());
    call.call_id = "call-" + std::to_string(++calls);  // the journal needs one
    call.modern = true;
    call.context = std::make_shared<ModernClient>(exchange, call.control);
    CallResult out = through(call);
    if (asked && out.outcome == CallOutcome::input_required) {
      *asked = std::get<json>(exchange->input_required_result());
    }
    return out;
  }

  // The first round through `through`, then the retry a human's yes makes.
  json accepted_retry(const CallHandler& through, const std::string& tool = "delete_note") {
    json question;
    CallResult asked = run(through, json::object(), &question, tool);
    REQUIRE(asked.outcome == CallOutcome::input_required);
    REQUIRE(question["inputRequests"].contains(kConfirmationKey));
    return {{"requestState", question["requestState"]},
            {"inputResponses", {{kConfirmationKey, kYes}}}};
  }
};

void check_refused_as_used(const CallResult& r, const std::string& tool = "delete_note") {
  CHECK(r.outcome == CallOutcome::denied);
  CHECK(r.result.is_error);
  CHECK(
      text_at(r) ==
      "Tool \"" + tool +
          "\" did not run: this confirmation was already used, and a "
          "confirmation lets a tool run once (policy rule /policy/confirm/classes). Call it again "
          "without \"requestState\" and \"inputResponses\" to be asked again.");
}

// A journal on `options` as serve opens it: the journal store, and the spent
// tokens beside it.
std::shared_ptr<const CallJournal> open_journal(const JournalStoreOptions& options) {
  auto store = JournalStore::open(options);
  REQUIRE(store.ok());
  auto spent = open_spent_tokens(options);
  REQUIRE(spent.ok());
  return std::make_shared<const CallJournal>(std::move(store).value(), "", std::move(*spent));
}

}  // namespace

TEST_CASE(
    "the same accepted retry sent twice runs the tool once, and the second is refused as used") {
  ConfirmedFixture f;
  const json retry = f.accepted_retry(f.pipeline);
  CallResult first = f.run(f.pipeline, retry);
  CHECK(first.outcome == CallOutcome::ok);
  CHECK(text_at(first) == "gone");
  CHECK(*f.runs == 1);

  check_refused_as_used(f.run(f.pipeline, retry));
  CHECK(*f.runs == 1);

  // Asked again, the human's new yes runs it again.
  CHECK(f.run(f.pipeline, f.accepted_retry(f.pipeline)).outcome == CallOutcome::ok);
  CHECK(*f.runs == 2);
}

TEST_CASE(
    "a tool that asks after its confirmation is confirmed once: each round's state carries the "
    "yes under a new id, and no round can be sent again") {
  ConfirmedFixture f;
  const json round2 = f.accepted_retry(f.pipeline, "delete_colored");
  json color_question;
  CHECK(f.run(f.pipeline, round2, &color_question, "delete_colored").outcome ==
        CallOutcome::input_required);
  REQUIRE(color_question["inputRequests"].contains("color"));
  const json round3 = {
      {"requestState", color_question["requestState"]},
      {"inputResponses", {{"color", {{"action", "accept"}, {"content", {{"c", "red"}}}}}}}};
  CHECK(f.run(f.pipeline, round3, nullptr, "delete_colored").outcome == CallOutcome::ok);
  CHECK(*f.runs == 1);
  check_refused_as_used(f.run(f.pipeline, round3, nullptr, "delete_colored"), "delete_colored");
  check_refused_as_used(f.run(f.pipeline, round2, nullptr, "delete_colored"), "delete_colored");
  CHECK(*f.runs == 1);
}

TEST_CASE("verify_confirmation spends the answer's id, and a journal that did not open refuses") {
  ConfirmedFixture f;
  StubNext next;
  auto call_with = [&](const std::string& answer_id) {
    ToolCall call = f.resolved_call("delete_note", kNote.dump(), true);
    call.confirmation = "accepted";
    call.confirmed = Confirmation{invocation_digest(call), "local", "Ada", "stale", answer_id};
    return call;
  };
  auto memory = stages::verify_confirmation(std::make_shared<const CallJournal>())(next.handler());
  ToolCall first = call_with("answer-1");
  CHECK(text_at(memory(first)) == "next");
  ToolCall second = call_with("answer-1");
  check_refused_as_used(memory(second));
  CHECK(second.confirmation == "reused");
  // A legacy client's answer came live: there is nothing to spend.
  ToolCall live = call_with("");
  CHECK(text_at(memory(live)) == "next");
  ToolCall live_again = call_with("");
  CHECK(text_at(memory(live_again)) == "next");
  CHECK(next.calls == 3);

  auto closed = stages::verify_confirmation(
      std::make_shared<const CallJournal>(nullptr, "no space left on device"))(next.handler());
  ToolCall unknown = call_with("answer-2");
  CallResult r = closed(unknown);
  CHECK(r.outcome == CallOutcome::stopped);
  CHECK(text_at(r) ==
        "Tool \"delete_note\" did not run: toolmux could not record that its confirmation is "
        "used, so it cannot tell whether it was used before: no space left on device");
  CHECK(next.calls == 3);
}

TEST_CASE(
    "a retry used through one journal is refused through another on the same data directory") {
  ConfirmedFixture f;
  TempDir dir;
  JournalStoreOptions options;
  options.data_dir = dir.path();
  auto first = build_call_pipeline(f.logger, f.metrics, f.running, nullptr, open_journal(options));
  auto second = build_call_pipeline(f.logger, f.metrics, f.running, nullptr, open_journal(options));
  const json retry = f.accepted_retry(first);
  CHECK(f.run(first, retry).outcome == CallOutcome::ok);
  check_refused_as_used(f.run(second, retry));
  check_refused_as_used(f.run(first, retry));
  CHECK(*f.runs == 1);
}

TEST_CASE("a retry used through one instance is refused through another on the same PostgreSQL") {
  ConfirmedFixture f;
  const std::string database = fresh_postgres_database();
  JournalStoreOptions a;
  a.postgres = open_postgres_store(database);
  JournalStoreOptions b;
  b.postgres = open_postgres_store(database);
  auto first = build_call_pipeline(f.logger, f.metrics, f.running, nullptr, open_journal(a));
  auto second = build_call_pipeline(f.logger, f.metrics, f.running, nullptr, open_journal(b));
  const json retry = f.accepted_retry(first);
  CHECK(f.run(second, retry).outcome == CallOutcome::ok);
  check_refused_as_used(f.run(first, retry));
  CHECK(*f.runs == 1);
}
