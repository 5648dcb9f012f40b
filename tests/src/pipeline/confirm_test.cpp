// The confirm and verify_confirmation stages: a guarded call runs only with a
// human's yes to this one invocation, checked again just before it runs. The
// client is a scripted CallContext here; tests/e2e/guarded_mutations.test.mjs
// asks real SDK clients of both eras.
#include <catch2/catch.hpp>

#include "src/base/redact.h"
#include "src/pipeline/confirm.h"
#include "src/pipeline/verify_confirmation.h"
#include "tests/support/pipeline_fixture.h"
#include "tests/support/test_context.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

// A client that declared `capabilities` and answers elicitation/create with
// `answer`; keeps what it was asked.
class ScriptedClient : public TestContext {
 public:
  json capabilities = {{"elicitation", json::object()}};
  ClientAnswer answer;
  std::vector<json> asked;
  std::vector<std::string> keys;

  json client_capabilities() const override { return capabilities; }
  ClientAnswer ask_client(const std::string& method, const json& params, const std::stop_token&,
                          const std::string& key) override {
    CHECK(method == "elicitation/create");
    asked.push_back(params);
    keys.push_back(key);
    return answer;
  }
};

ClientAnswer accepted(json content) {
  return {json{{"action", "accept"}, {"content", std::move(content)}}, "", false};
}

// The fixture's tools plus delete_note, a destructive tool.
struct GuardedFixture : PipelineFixture {
  GuardedFixture() {
    auto registry = make_test_registry();
    ToolSpec s = spec("delete_note", object_schema({{"name", {{"type", "string"}}}}, {"name"}));
    s.side_effect = "destructive";
    REQUIRE(registry->add(s, [](const json&, CallContext&) { return ToolResult::text("gone"); })
                .empty());
    catalog = make_test_catalog(registry);
  }

  ToolCall guarded_call(const std::shared_ptr<ScriptedClient>& client,
                        const std::string& arguments = R"({"name": "todo.txt"})") {
    ToolCall call = resolved_call("delete_note", arguments, true);
    call.context = client;
    call.reason = "the user asked to clean up";
    return call;
  }
};

}  // namespace

// A name typed in the answer does not count.
TEST_CASE("over stdio a destructive call runs once the local user approves it, with a rationale") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  client->answer =
      accepted({{"approve", true}, {"approver", " Ada "}, {"rationale", "It is stale."}});
  // The approver is who the operating system says runs toolmux.
  const std::string me = local_user_name();
  REQUIRE_FALSE(me.empty());
  CHECK(me != "Ada");
  StubNext next;
  ToolCall call = f.guarded_call(client);
  CallResult r = stages::confirm()(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(text_at(r) == "next");
  REQUIRE(call.confirmed);
  CHECK(call.confirmation == "accepted");
  CHECK(call.confirmed->approver == me);
  CHECK(call.confirmed->rationale == "It is stale.");
  CHECK(call.confirmed->principal == "local");
  CHECK(call.confirmed->invocation == invocation_digest(call));
  // What the human was shown: the action, its class, the arguments, the
  // reason and the caller; asked under the key MRTR answers come back with.
  REQUIRE(client->asked.size() == 1);
  CHECK(client->keys.at(0) == kConfirmationKey);
  const std::string message = client->asked[0]["message"];
  CHECK_THAT(message, Catch::Contains("Tool: delete_note (destructive)"));
  CHECK_THAT(message, Catch::Contains("\"name\": \"todo.txt\""));
  CHECK_THAT(message, Catch::Contains("Reason given: the user asked to clean up"));
  CHECK_THAT(message, Catch::Contains("Caller: local"));
  CHECK_THAT(message, Catch::Contains("You approve as " + me +
                                      ", the user toolmux runs as on this machine"));
  const json& schema = client->asked[0]["requestedSchema"];
  CHECK(schema["required"] == json({"approve", "rationale"}));
  CHECK_FALSE(schema["properties"].contains("approver"));
  CHECK(schema["properties"]["rationale"]["maxLength"] == 500);
}

TEST_CASE(
    "a decline, a cancel, a no or a missing piece: the tool does not run, and the result "
    "says why, naming the rule") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  struct Case {
    ClientAnswer answer;
    std::string says;
  };
  std::vector<Case> cases = {
      {{json{{"action", "decline"}}, "", false}, "the confirmation was declined"},
      {{json{{"action", "cancel"}}, "", false}, "the confirmation was cancelled"},
      {accepted({{"approve", false}, {"approver", "Ada"}, {"rationale", "no"}}),
       "the confirmation did not approve it"},
      {accepted({{"approve", true}, {"approver", "Ada"}}), "came with no rationale"},
      {accepted({{"approve", true}, {"approver", "Ada"}, {"rationale", std::string(501, 'x')}}),
       "a rationale longer than 500 characters"},
      {{std::nullopt, "the client answered with an error: boom", false},
       "asking the client failed: the client answered with an error: boom"},
  };
  for (const Case& c : cases) {
    client->answer = c.answer;
    StubNext next;
    ToolCall call = f.guarded_call(client);
    CallResult r = stages::confirm()(next.handler())(call);
    INFO(c.says);
    CHECK(next.calls == 0);
    CHECK(r.outcome == CallOutcome::denied);
    CHECK(r.result.is_error);
    CHECK_THAT(text_at(r), Catch::StartsWith("Tool \"delete_note\" did not run"));
    CHECK_THAT(text_at(r), Catch::Contains(c.says));
    CHECK_THAT(text_at(r), Catch::Contains("/policy/confirm/classes"));
    CHECK_FALSE(call.confirmed);
  }
}

TEST_CASE("a client that did not declare elicitation is refused without being asked") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  client->capabilities = {{"sampling", json::object()}};
  StubNext next;
  ToolCall call = f.guarded_call(client);
  CallResult r = stages::confirm()(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(client->asked.empty());
  CHECK(r.outcome == CallOutcome::denied);
  CHECK(call.confirmation == "unavailable");
  CHECK_THAT(text_at(r), Catch::Contains("it needs a human's confirmation (policy rule "
                                         "/policy/confirm/classes), and this client cannot ask"));
}

TEST_CASE("a 2026-07-28 client's question goes back in the answer: the call is input_required") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  client->answer = {std::nullopt, "", true};
  StubNext next;
  ToolCall call = f.guarded_call(client);
  CallResult r = stages::confirm()(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(r.outcome == CallOutcome::input_required);
  CHECK(call.confirmation == "asked");
}

TEST_CASE("a 2026-07-28 question reads the same on every retry: no per-request label in it") {
  GuardedFixture f;
  std::vector<json> asked;
  for (const char* label : {"modern-1", "modern-2"}) {
    auto client = std::make_shared<ScriptedClient>();
    client->answer = {std::nullopt, "", true};
    StubNext next;
    ToolCall call = f.guarded_call(client);
    call.modern = true;
    call.session_label = label;
    stages::confirm()(next.handler())(call);
    REQUIRE(client->asked.size() == 1);
    asked.push_back(client->asked.front());
  }
  CHECK(asked[0] == asked[1]);
  CHECK_THAT(asked[0]["message"].get<std::string>(), !Catch::Contains("modern-"));

  // A legacy session's label is shown: it names the session the human knows.
  auto client = std::make_shared<ScriptedClient>();
  client->answer = {std::nullopt, "", true};
  StubNext next;
  ToolCall call = f.guarded_call(client);
  call.session_label = "http-7";
  stages::confirm()(next.handler())(call);
  REQUIRE(client->asked.size() == 1);
  CHECK_THAT(client->asked.front()["message"].get<std::string>(),
             Catch::Contains("Caller: local, session http-7"));
}

TEST_CASE("a read_only call and a call no rule guards are not asked about") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  StubNext next;
  ToolCall read = f.resolved_call("echo", echo_args("x"), true);
  read.context = client;
  CHECK(text_at(stages::confirm()(next.handler())(read)) == "next");
  f.catalog->policy.confirm.rule.classes = std::set<SideEffect>{};
  ToolCall unguarded = f.guarded_call(client);
  CHECK(text_at(stages::confirm()(next.handler())(unguarded)) == "next");
  CHECK(client->asked.empty());
  CHECK(next.calls == 2);
}

TEST_CASE("secrets in the arguments, the reason and the rationale are redacted") {
  register_secret("hunter2-is-my-password");
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  client->answer = accepted({{"approve", true},
                             {"approver", "Ada"},
                             {"rationale", "ok, hunter2-is-my-password is rotated"}});
  StubNext next;
  ToolCall call = f.guarded_call(client, R"({"name": "hunter2-is-my-password"})");
  call.reason = "because hunter2-is-my-password";
  stages::confirm()(next.handler())(call);
  REQUIRE(client->asked.size() == 1);
  const std::string message = client->asked[0]["message"];
  CHECK(message.find("hunter2-is-my-password") == std::string::npos);
  CHECK_THAT(message, Catch::Contains("[REDACTED]"));
  REQUIRE(call.confirmed);
  CHECK(call.confirmed->rationale == "ok, [REDACTED] is rotated");
}

TEST_CASE("verify_confirmation runs a guarded call only with a confirmation of this very call") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  StubNext next;
  auto verify = stages::verify_confirmation(std::make_shared<const CallJournal>())(next.handler());

  ToolCall none = f.guarded_call(client);
  CallResult r = verify(none);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK_THAT(text_at(r), Catch::Contains("there is no confirmation (policy rule "
                                         "/policy/confirm/classes)"));

  ToolCall good = f.guarded_call(client);
  good.confirmation = "accepted";
  good.confirmed = Confirmation{invocation_digest(good), "local", "Ada", "stale"};
  CHECK(text_at(verify(good)) == "next");

  ToolCall other_arguments = f.guarded_call(client, R"({"name": "other.txt"})");
  other_arguments.confirmation = "accepted";
  other_arguments.confirmed = good.confirmed;
  CHECK_THAT(text_at(verify(other_arguments)), Catch::Contains("for another invocation"));

  ToolCall other_principal = f.guarded_call(client);
  other_principal.principal = "mallory";
  other_principal.confirmation = "accepted";
  other_principal.confirmed = good.confirmed;
  CHECK_THAT(text_at(verify(other_principal)), Catch::Contains("another principal"));

  ToolCall no_rationale = f.guarded_call(client);
  no_rationale.confirmation = "accepted";
  no_rationale.confirmed = Confirmation{invocation_digest(no_rationale), "local", "Ada", ""};
  CHECK_THAT(text_at(verify(no_rationale)), Catch::Contains("gives no rationale"));
  CHECK(next.calls == 1);

  ToolCall read = f.resolved_call("echo", echo_args("x"), true);
  CHECK(text_at(verify(read)) == "next");
}

TEST_CASE(
    "verify_confirmation refuses each way a confirmation can fail, and names them all at once") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  StubNext next;
  auto verify = stages::verify_confirmation(std::make_shared<const CallJournal>())(next.handler());
  auto confirmed = [&](const std::string& approver, const std::string& rationale,
                       const std::string& answer = "accepted") {
    ToolCall call = f.guarded_call(client);
    call.confirmation = answer;
    call.confirmed = Confirmation{invocation_digest(call), "local", approver, rationale};
    return call;
  };
  const std::string rule = " (policy rule /policy/confirm/classes)";
  auto refusal = [&](ToolCall call) {
    const CallResult r = verify(call);
    CHECK(r.outcome == CallOutcome::denied);
    return text_at(r);
  };

  CHECK_THAT(refusal(confirmed("Ada", "stale", "declined")),
             Catch::EndsWith("did not run: the confirmation was not accepted" + rule));
  CHECK_THAT(refusal(confirmed("", "stale")),
             Catch::EndsWith("did not run: the confirmation names no approver" + rule));
  CHECK_THAT(
      refusal(confirmed(std::string(ConfirmPolicy::kMaxApproverChars + 1, 'a'), "stale")),
      Catch::EndsWith("did not run: the confirmation's approver is over " +
                      std::to_string(ConfirmPolicy::kMaxApproverChars) + " characters" + rule));
  CHECK_THAT(
      refusal(confirmed("Ada", std::string(ConfirmPolicy::kMaxRationaleChars + 1, 'r'))),
      Catch::EndsWith("did not run: the confirmation's rationale is over " +
                      std::to_string(ConfirmPolicy::kMaxRationaleChars) + " characters" + rule));
  // At the limits, it holds.
  ToolCall at_limits = confirmed(std::string(ConfirmPolicy::kMaxApproverChars, 'a'),
                                 std::string(ConfirmPolicy::kMaxRationaleChars, 'r'));
  CHECK(text_at(verify(at_limits)) == "next");
  // Several problems: all of them, in one answer (before, only the first).
  ToolCall many = confirmed("", "", "declined");
  many.principal = "mallory";
  CHECK_THAT(refusal(std::move(many)),
             Catch::EndsWith("did not run: the confirmation was not accepted; the confirmation "
                             "belongs to another principal; the confirmation names no approver; "
                             "the confirmation gives no rationale" +
                             rule));
  CHECK(next.calls == 1);
}

TEST_CASE("the whole pipeline does not run a destructive tool for a client that cannot confirm") {
  GuardedFixture f;
  ToolCall call = f.make_call("delete_note", R"({"name": "todo.txt"})");
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::denied);
  CHECK_THAT(text_at(r), Catch::Contains("cannot ask for one"));
}

TEST_CASE("signed in, the caller approves: no name is asked, and a name typed does not count") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  client->answer =
      accepted({{"approve", true}, {"approver", "Somebody Else"}, {"rationale", "ok"}});
  StubNext next;
  ToolCall call = f.guarded_call(client);
  call.principal = "alice";
  stages::confirm(Approvers::authenticated)(next.handler())(call);
  CHECK(next.calls == 1);
  REQUIRE(call.confirmed);
  CHECK(call.confirmed->approver == "alice");
  REQUIRE(client->asked.size() == 1);
  const json& question = client->asked[0];
  CHECK_THAT(question["message"].get<std::string>(),
             Catch::Contains("You approve as alice, the signed-in caller"));
  CHECK(question["requestedSchema"]["required"] == json::array({"approve", "rationale"}));
  CHECK_FALSE(question["requestedSchema"]["properties"].contains("approver"));

  // Without a rationale it still does not run.
  client->answer = accepted({{"approve", true}});
  StubNext again;
  ToolCall second = f.guarded_call(client);
  second.principal = "alice";
  stages::confirm(Approvers::authenticated)(again.handler())(second);
  CHECK(again.calls == 0);
  CHECK(second.confirmation == "declined");
}

TEST_CASE("over HTTP without authentication a guarded call is refused, nobody asked") {
  GuardedFixture f;
  auto client = std::make_shared<ScriptedClient>();
  client->answer = accepted({{"approve", true}, {"approver", "Anyone"}, {"rationale", "why not"}});
  StubNext next;
  ToolCall call = f.guarded_call(client);
  CallResult r = stages::confirm(Approvers::nobody)(next.handler())(call);
  CHECK(next.calls == 0);
  CHECK(client->asked.empty());
  CHECK(call.confirmation == "unavailable");
  CHECK_FALSE(call.confirmed);
  CHECK_THAT(text_at(r), Catch::Contains("cannot tell who would approve it: it takes no bearer "
                                         "tokens. Ask the operator to serve with --tokens-file "
                                         "or --auth-issuer"));
  // A tool no rule guards still runs.
  StubNext read;
  ToolCall echo = f.resolved_call("echo", R"({"text": "hi"})", true);
  echo.context = client;
  stages::confirm(Approvers::nobody)(read.handler())(echo);
  CHECK(read.calls == 1);
}
