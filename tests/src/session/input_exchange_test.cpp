#include "src/session/input_exchange.h"

#include <catch2/catch.hpp>

namespace toolmux {

using nlohmann::json;

namespace {

const json kElicit = {
    {"mode", "form"}, {"message", "Your name?"}, {"requestedSchema", {{"type", "object"}}}};
const json kCanElicit = {{"elicitation", json::object()}};

RequestBinding binding(std::string owner = "alice", json arguments = {{"x", 1}}) {
  return {std::move(owner), "tools/call", "greet", std::move(arguments)};
}

std::shared_ptr<InputExchange> opened(
    const json& params, RequestBinding b, const std::shared_ptr<const SealingKey>& key,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
  auto out = InputExchange::open(params, std::move(b), key, now);
  const auto* e = std::get_if<JsonRpcError>(&out);
  INFO((e ? e->message : std::string()));
  REQUIRE(e == nullptr);
  return std::get<std::shared_ptr<InputExchange>>(out);
}

std::string refusal(const json& params, RequestBinding b,
                    const std::shared_ptr<const SealingKey>& key,
                    std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
  auto out = InputExchange::open(params, std::move(b), key, now);
  const auto* e = std::get_if<JsonRpcError>(&out);
  REQUIRE(e != nullptr);
  CHECK(e->code == -32602);
  return e->message;
}

// Round one: the handler asks; the answer is the input_required result.
json first_round(const std::shared_ptr<const SealingKey>& key,
                 const std::string& question = "user_name") {
  auto exchange = opened(json::object(), binding(), key);
  ClientAnswer a = exchange->ask("elicitation/create", kElicit, question, kCanElicit);
  CHECK(a.pending);
  CHECK_FALSE(a.result);
  REQUIRE(exchange->input_required());
  auto result = exchange->input_required_result();
  REQUIRE(std::holds_alternative<json>(result));
  return std::get<json>(result);
}

}  // namespace

TEST_CASE("a question goes out in an input_required result and its answer comes back on the retry",
          "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  const json r1 = first_round(key);
  CHECK(r1["resultType"] == "input_required");
  CHECK(r1["inputRequests"]["user_name"] ==
        json{{"method", "elicitation/create"}, {"params", kElicit}});
  REQUIRE(r1["requestState"].is_string());
  // Nothing of the request can be read from its state.
  CHECK(r1["requestState"].get<std::string>().find("alice") == std::string::npos);

  const json answer = {{"action", "accept"}, {"content", {{"name", "Alice"}}}};
  auto retry = opened({{"requestState", r1["requestState"]},
                       {"inputResponses", {{"user_name", answer}, {"extra", 12345}}}},
                      binding(), key);
  ClientAnswer a = retry->ask("elicitation/create", kElicit, "user_name", kCanElicit);
  CHECK_FALSE(a.pending);
  REQUIRE(a.result);
  CHECK(*a.result == answer);
  CHECK_FALSE(retry->input_required());
}

TEST_CASE("answers build up over rounds, and a question left unanswered is asked again",
          "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  const json r1 = first_round(key);
  const json first = {{"action", "accept"}, {"content", {{"name", "Alice"}}}};
  auto round2 =
      opened({{"requestState", r1["requestState"]}, {"inputResponses", {{"user_name", first}}}},
             binding(), key);
  REQUIRE(round2->ask("elicitation/create", kElicit, "user_name", kCanElicit).result);
  const json sampling = {{"messages", json::array()}, {"maxTokens", 10}};
  CHECK(
      round2->ask("sampling/createMessage", sampling, "", {{"sampling", json::object()}}).pending);
  const json r2 = std::get<json>(round2->input_required_result());
  // Unnamed questions are numbered by the order of asking in the run.
  CHECK(r2["inputRequests"].contains("input-2"));
  CHECK_FALSE(r2["inputRequests"].contains("user_name"));

  SECTION("the retry without the answer asked for is asked the same question again") {
    auto again = opened({{"requestState", r2["requestState"]}}, binding(), key);
    CHECK(again->ask("elicitation/create", kElicit, "user_name", kCanElicit).result == first);
    CHECK(
        again->ask("sampling/createMessage", sampling, "", {{"sampling", json::object()}}).pending);
  }
  SECTION("the third round has both answers") {
    const json reply = {{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "Paris"}}}};
    auto round3 =
        opened({{"requestState", r2["requestState"]}, {"inputResponses", {{"input-2", reply}}}},
               binding(), key);
    CHECK(round3->ask("elicitation/create", kElicit, "user_name", kCanElicit).result == first);
    CHECK(round3->ask("sampling/createMessage", sampling, "", {{"sampling", json::object()}})
              .result == reply);
    CHECK_FALSE(round3->input_required());
  }
}

TEST_CASE("a changed, foreign, lapsed or misplaced requestState is refused with -32602",
          "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  const json r1 = first_round(key);
  const std::string state = r1["requestState"];
  const json answers = {{"user_name", {{"action", "accept"}}}};
  CHECK(
      refusal({{"requestState", state + "-TAMPERED"}, {"inputResponses", answers}}, binding(), key)
          .find("was not made by this server") != std::string::npos);
  CHECK(refusal({{"requestState", 42}}, binding(), key).find("was not made") != std::string::npos);
  auto other_key = std::make_shared<const SealingKey>(SealingKey::random());
  CHECK(refusal({{"requestState", state}}, binding(), other_key).find("was not made") !=
        std::string::npos);
  CHECK(
      refusal({{"requestState", state}}, binding("bob"), key).find("belongs to another request") !=
      std::string::npos);
  CHECK(refusal({{"requestState", state}}, binding("alice", {{"x", 2}}), key)
            .find("belongs to another request") != std::string::npos);
  const auto later =
      std::chrono::system_clock::now() + InputExchange::kStateLifetime + std::chrono::minutes(1);
  CHECK(refusal({{"requestState", state}}, binding(), key, later).find("has lapsed") !=
        std::string::npos);
}

TEST_CASE(
    "an answer of the wrong shape is refused naming its question, and one never asked is ignored",
    "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  const json r1 = first_round(key);
  CHECK(refusal({{"requestState", r1["requestState"]}, {"inputResponses", {{"user_name", 12345}}}},
                binding(), key) ==
        "Invalid params: inputResponses[\"user_name\"] answers elicitation/create and must be an "
        "object");
  CHECK(refusal({{"requestState", r1["requestState"]}, {"inputResponses", "no"}}, binding(), key)
            .find("\"inputResponses\" must be an object") != std::string::npos);
}

TEST_CASE(
    "answers without a requestState are taken for their keys when of the right shape, and have no "
    "id",
    "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  auto unsolicited = opened(
      {{"inputResponses", {{"user_name", {{"action", "accept"}}}, {"age", 12345}, {"x", "y"}}}},
      binding(), key);
  ClientAnswer taken = unsolicited->ask("elicitation/create", kElicit, "user_name", kCanElicit);
  REQUIRE(taken.result);
  CHECK((*taken.result)["action"] == "accept");
  CHECK(taken.answer_id.empty());  // nothing to spend: no question of ours
  // The wrong shape, or a key never offered: asked.
  CHECK(unsolicited->ask("elicitation/create", kElicit, "age", kCanElicit).pending);
  CHECK(unsolicited->ask("elicitation/create", kElicit, "other", kCanElicit).pending);
  const json r = std::get<json>(unsolicited->input_required_result());
  CHECK(r["inputRequests"].contains("age"));
  CHECK_FALSE(r["inputRequests"].contains("user_name"));
}

TEST_CASE(
    "an answer to toolmux's confirmation that no question asked for is refused with -32602, with "
    "or without a requestState",
    "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  const json approval = {
      {"action", "accept"},
      {"content", {{"approve", true}, {"approver", "anyone"}, {"rationale", "self-approved"}}}};
  const std::string expected =
      "Invalid params: inputResponses[\"io.toolmux/confirm\"] answers no question toolmux asked: a "
      "confirmation counts only as the answer to the question toolmux asked for this call, sent "
      "back with its \"requestState\"; call again without \"inputResponses\" to be asked";
  // No state at all: the client approved its own call.
  CHECK(refusal({{"inputResponses", {{kConfirmationKey, approval}}}}, binding(), key) == expected);
  // A state of ours that asked something else.
  const json r1 = first_round(key);
  CHECK(refusal({{"requestState", r1["requestState"]},
                 {"inputResponses",
                  {{"user_name", {{"action", "accept"}}}, {kConfirmationKey, approval}}}},
                binding(), key) == expected);
  // The state that asked it takes it.
  auto asking = opened(json::object(), binding(), key);
  CHECK(asking->ask("elicitation/create", kElicit, kConfirmationKey, kCanElicit).pending);
  const json r2 = std::get<json>(asking->input_required_result());
  auto retry = opened(
      {{"requestState", r2["requestState"]}, {"inputResponses", {{kConfirmationKey, approval}}}},
      binding(), key);
  ClientAnswer taken = retry->ask("elicitation/create", kElicit, kConfirmationKey, kCanElicit);
  REQUIRE(taken.result);
  CHECK(*taken.result == approval);
}

TEST_CASE(
    "an answer names its question in its state: the same each time that state comes back, new in "
    "each later round's state",
    "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  const json r1 = first_round(key);
  const json answer = {{"action", "accept"}, {"content", {{"name", "Alice"}}}};
  const json retry = {{"requestState", r1["requestState"]},
                      {"inputResponses", {{"user_name", answer}}}};
  auto once = opened(retry, binding(), key);
  const ClientAnswer first = once->ask("elicitation/create", kElicit, "user_name", kCanElicit);
  auto again = opened(retry, binding(), key);
  const ClientAnswer second = again->ask("elicitation/create", kElicit, "user_name", kCanElicit);
  CHECK(first.answer_id.size() >= 16);
  CHECK(first.answer_id == second.answer_id);
  // Another run of the first round asks under another id.
  const json other_r1 = first_round(key);
  auto other = opened(
      {{"requestState", other_r1["requestState"]}, {"inputResponses", {{"user_name", answer}}}},
      binding(), key);
  CHECK(other->ask("elicitation/create", kElicit, "user_name", kCanElicit).answer_id !=
        first.answer_id);

  // Carried on into the next round's state, the answer gets a new id there.
  const json sampling = {{"messages", json::array()}, {"maxTokens", 10}};
  CHECK(once->ask("sampling/createMessage", sampling, "", {{"sampling", json::object()}}).pending);
  const json r2 = std::get<json>(once->input_required_result());
  auto round3 = opened({{"requestState", r2["requestState"]}}, binding(), key);
  const ClientAnswer carried = round3->ask("elicitation/create", kElicit, "user_name", kCanElicit);
  REQUIRE(carried.result);
  CHECK(*carried.result == answer);
  CHECK_FALSE(carried.answer_id.empty());
  CHECK(carried.answer_id != first.answer_id);
}

TEST_CASE("a client is never asked what it did not declare it can answer", "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  auto exchange = opened(json::object(), binding(), key);
  ClientAnswer a = exchange->ask("sampling/createMessage", json::object(), "", kCanElicit);
  CHECK_FALSE(a.pending);
  CHECK(a.error ==
        "the client did not declare the sampling capability, so it cannot be asked "
        "sampling/createMessage");
  CHECK_FALSE(exchange->input_required());
  ClientAnswer b = exchange->ask("tools/call", json::object(), "", kCanElicit);
  CHECK_FALSE(b.pending);
  CHECK_FALSE(exchange->input_required());
}

TEST_CASE("one run asks at most kMaxQuestions questions, each key once", "[input_exchange]") {
  auto key = std::make_shared<const SealingKey>(SealingKey::random());
  auto exchange = opened(json::object(), binding(), key);
  for (std::size_t i = 0; i < InputExchange::kMaxQuestions; ++i) {
    CHECK(exchange->ask("elicitation/create", kElicit, "", kCanElicit).pending);
  }
  ClientAnswer over = exchange->ask("elicitation/create", kElicit, "", kCanElicit);
  CHECK_FALSE(over.pending);
  CHECK(over.error.find("at most 16 questions") != std::string::npos);
  ClientAnswer twice = exchange->ask("elicitation/create", kElicit, "input-1", kCanElicit);
  CHECK_FALSE(twice.pending);
  CHECK(twice.error == "question \"input-1\" was asked twice in one run");
}

}  // namespace toolmux
