// The redact_result stage: secrets replaced in every answer, before the limits,
// and the personal data a tool's spec names in its answers.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>

#include "src/base/personal_data.h"
#include "src/base/redact.h"
#include "src/pipeline/redact_result.h"
#include "tests/support/pipeline_fixture.h"

using namespace toolmux;
using namespace toolmux::testing;
using nlohmann::json;

namespace {

const std::string kAwsKey = "AKIAIOSFODNN7EXAMPLE";

// The test tools and "keyed", whose outputSchema wants a "key" that starts
// with AKIA (a pattern that redaction breaks).
std::shared_ptr<Catalog> catalog_with_keyed_tool() {
  auto registry = make_test_registry();
  ToolSpec keyed = spec("keyed", object_schema());
  keyed.output_schema =
      object_schema({{"key", {{"type", "string"}, {"pattern", "^AKIA"}}}}, {"key"});
  REQUIRE(registry
              ->add(keyed,
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text("the key is " + kAwsKey);
                      r.structured_content = {{"key", kAwsKey}};
                      return r;
                    })
              .empty());
  return make_test_catalog(registry);
}

const std::string kPersonal = "alice@example.com, card 4111 1111 1111 1111, phone +1 555 123 4567";

// The test tools and "contacts" (e-mail and payment cards redacted), which
// answers with kPersonal in a text block and in structuredContent.
std::shared_ptr<Catalog> catalog_with_contacts_tool() {
  auto registry = make_test_registry();
  ToolSpec contacts = spec("contacts", object_schema());
  contacts.redact_personal_data.insert(PersonalData::email);
  contacts.redact_personal_data.insert(PersonalData::payment_card);
  REQUIRE(registry
              ->add(contacts,
                    [](const json&, CallContext&) {
                      ToolResult r = ToolResult::text(kPersonal);
                      r.structured_content = {{"who", kPersonal}, {"count", 1}};
                      return r;
                    })
              .empty());
  return make_test_catalog(registry);
}

// `tool` called with no arguments through the whole pipeline over `catalog`.
CallResult call_over(PipelineFixture& f, std::shared_ptr<Catalog> catalog,
                     const std::string& tool) {
  f.catalog = std::move(catalog);
  f.rebuild();
  ToolCall call = f.make_call(tool, "{}");
  return f.pipeline(call);
}

}  // namespace

TEST_CASE("redact_result redacts text, embedded resource text and structuredContent") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) {
    ToolResult r = ToolResult::text("key " + kAwsKey);
    r.content.push_back({{"type", "resource"},
                         {"resource", {{"uri", "file:///env"}, {"text", "password=hunter2"}}}});
    r.content.push_back({{"type", "image"}, {"mimeType", "image/png"}, {"data", "AKIA"}});
    r.structured_content = {{"note", "Authorization: Bearer abcDEF0123456789xyz"},
                            {"password", "hunter2"},
                            {"count", 3}};
    return CallResult::answered(r);
  };
  ToolCall call = f.resolved_call("echo", "{}");
  CallResult r = stages::redact_result()(next.handler())(call);
  CHECK(next.calls == 1);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "key [REDACTED:aws_access_key_id]");
  CHECK(r.result.content[1]["resource"]["text"] == "password=[REDACTED:secret_value]");
  CHECK(r.result.content[1]["resource"]["uri"] == "file:///env");
  CHECK(r.result.content[2]["data"] == "AKIA");
  CHECK(r.result.structured_content ==
        json{{"note", "Authorization: Bearer [REDACTED:bearer_token]"},
             {"password", "[REDACTED]"},
             {"count", 3}});
}

TEST_CASE("redact_result redacts the errors toolmux writes too, and leaves clean answers alone") {
  PipelineFixture f;
  StubNext next;
  ToolCall call = f.resolved_call("echo", "{}");
  const CallStage stage = stages::redact_result();
  CHECK(stage(next.handler())(call).result.to_json() == ToolResult::text("next").to_json());
  next.answer = [](ToolCall&) {
    return CallResult::invalid_arguments("Invalid arguments: /key: " + kAwsKey + " is wrong");
  };
  const CallResult error = stage(next.handler())(call);
  CHECK(error.outcome == CallOutcome::invalid_arguments);
  CHECK(text_at(error) == "Invalid arguments: /key: [REDACTED:aws_access_key_id] is wrong");
}

TEST_CASE("structuredContent that redaction takes out of its outputSchema is left out") {
  PipelineFixture f;
  CallResult r = call_over(f, catalog_with_keyed_tool(), "keyed");
  CHECK(r.outcome == CallOutcome::bad_result);
  CHECK(r.result.is_error);
  CHECK(r.result.structured_content.is_null());
  CHECK(text_at(r) == "the key is [REDACTED:aws_access_key_id]");
  CHECK(text_at(r, 1) ==
        "[toolmux: tool \"keyed\" returned structuredContent that held secrets or personal data; "
        "redacted, it no longer matches the tool's outputSchema, so it is left out]");
  CHECK(r.result.to_json()["_meta"] == json{{"io.toolmux/outcome", "bad_result"}});
}

TEST_CASE("structuredContent that still matches its outputSchema stays, redacted") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) {
    ToolResult r = ToolResult::text("{}");
    r.structured_content = {{"items", {"plain", "token=abc"}}};
    return CallResult::answered(r);
  };
  ToolCall call = f.resolved_call("listing", "{}");  // items: an array of strings
  CallResult r = stages::redact_result()(next.handler())(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(r.result.structured_content == json{{"items", {"plain", "token=[REDACTED:secret_value]"}}});
}

TEST_CASE("redact_result lets a cancelled answer through, and needs resolve_tool before it") {
  PipelineFixture f;
  StubNext next;
  next.answer = [](ToolCall&) { return CallResult::cancelled(); };
  ToolCall call = f.resolved_call("echo", "{}");
  CHECK(stages::redact_result()(next.handler())(call).outcome == CallOutcome::cancelled);
  ToolCall unresolved = f.make_call("echo", "{}");
  CallResult r = stages::redact_result()(next.handler())(unresolved);
  CHECK(r.outcome == CallOutcome::internal_error);
  CHECK(next.calls == 1);
}

TEST_CASE("a secret a tool echoes reaches neither the client nor the log") {
  PipelineFixture f;
  register_secret("Pp3-known-secret-of-the-pipeline");
  ToolCall call =
      f.make_call("echo", echo_args("say Pp3-known-secret-of-the-pipeline and " + kAwsKey));
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == "say [REDACTED] and [REDACTED:aws_access_key_id]");
  const std::string log = f.log_text();
  CHECK_THAT(log, !Catch::Contains("Pp3-known-secret"));
  CHECK_THAT(log, !Catch::Contains(kAwsKey));
}

TEST_CASE("what a tool logs to the client is redacted as its results are") {
  PipelineFixture f;
  ToolCall call = f.make_call("echo", "{}");
  call.context->log(LogLevel::error, {{"message", "upstream key " + kAwsKey}, {"token", 7}});
  const auto logs = f.sink.notifications("notifications/message");
  REQUIRE(logs.size() == 1);
  CHECK(logs[0]["params"]["data"] ==
        json{{"message", "upstream key [REDACTED:aws_access_key_id]"}, {"token", "[REDACTED]"}});
}

TEST_CASE("redact_result hides the personal data a tool's spec names, in its whole answer") {
  PipelineFixture f;
  CallResult r = call_over(f, catalog_with_contacts_tool(), "contacts");
  CHECK(r.outcome == CallOutcome::ok);
  const std::string hidden =
      "[REDACTED:email], card [REDACTED:payment_card], phone +1 555 123 4567";
  CHECK(text_at(r) == hidden);  // phone is not among its classes
  CHECK(r.result.structured_content == json{{"who", hidden}, {"count", 1}});

  StubNext next;
  next.answer = [](ToolCall&) {
    ToolResult answer = ToolResult::text("key " + kAwsKey + " of alice@example.com");
    answer.content.push_back(
        {{"type", "resource"}, {"resource", {{"uri", "file:///a"}, {"text", kPersonal}}}});
    return CallResult::answered(answer);
  };
  ToolCall resolved = f.resolved_call("contacts", "{}");
  CallResult blocks = stages::redact_result()(next.handler())(resolved);
  CHECK(text_at(blocks) == "key [REDACTED:aws_access_key_id] of [REDACTED:email]");
  CHECK(blocks.result.content[1]["resource"]["text"] == hidden);
}

TEST_CASE("personal data passes unchanged from a tool that names no class (the default)") {
  PipelineFixture f;
  ToolCall call = f.make_call("echo", echo_args(kPersonal));
  CallResult r = f.pipeline(call);
  CHECK(r.outcome == CallOutcome::ok);
  CHECK(text_at(r) == kPersonal);
}
