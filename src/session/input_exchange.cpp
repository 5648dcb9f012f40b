#include "src/session/input_exchange.h"

#include <utility>

#include "src/base/random_id.h"

namespace toolmux {

using nlohmann::json;

namespace {

// 2: questions and answers carry ids (single use); states of version 1,
// whose answers have none, are refused as not made by this server.
constexpr int kStateVersion = 2;

long long epoch_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string question_digest(const std::string& method, const json& params) {
  return digest(method + "\n" + dump(params));
}

// The capability a client must have declared to be asked `method`.
const char* capability_for(const std::string& method) {
  if (method == "elicitation/create") return "elicitation";
  if (method == "sampling/createMessage") return "sampling";
  if (method == "roots/list") return "roots";
  return nullptr;
}

// What is wrong with `answer` as the result of `method`; "" when nothing.
std::string answer_problem(const std::string& method, const json& answer) {
  if (!answer.is_object()) return "must be an object";
  if (method == "elicitation/create") {
    const auto action = answer.find("action");
    if (action == answer.end() || !action->is_string() ||
        (*action != "accept" && *action != "decline" && *action != "cancel")) {
      return "must be an ElicitResult: \"action\" is one of accept, decline, cancel";
    }
    if (answer.contains("content") && !answer["content"].is_object()) {
      return "must be an ElicitResult: \"content\" is an object";
    }
  } else if (method == "sampling/createMessage") {
    if (!answer.contains("content") || !answer.contains("role")) {
      return "must be a CreateMessageResult, with \"role\" and \"content\"";
    }
  } else if (method == "roots/list") {
    if (!answer.contains("roots") || !answer["roots"].is_array()) {
      return "must be a ListRootsResult, with \"roots\" (an array)";
    }
  }
  return "";
}

JsonRpcError refuse(const std::string& why) { return JsonRpcError::invalid_params(why); }

// A new id for a question asked, or an answer carried into a new state.
std::string new_answer_id() { return random_id(16); }

// The refusal of an answer to the confirmation that no question of ours
// asked for (an approval the client wrote itself).
JsonRpcError unasked_confirmation() {
  return refuse(std::string("inputResponses[") + json(kConfirmationKey).dump() +
                "] answers no question toolmux asked: a confirmation counts only as the answer "
                "to the question toolmux asked for this call, sent back with its "
                "\"requestState\"; call again without \"inputResponses\" to be asked");
}

}  // namespace

std::variant<std::shared_ptr<InputExchange>, JsonRpcError> InputExchange::open(
    const json& params, RequestBinding binding, std::shared_ptr<const SealingKey> key,
    std::chrono::system_clock::time_point now) {
  std::shared_ptr<InputExchange> exchange(new InputExchange(std::move(binding), std::move(key)));
  const json* state_text = nullptr;
  const json* responses = nullptr;
  if (params.is_object()) {
    if (auto it = params.find("requestState"); it != params.end()) state_text = &*it;
    if (auto it = params.find("inputResponses"); it != params.end()) responses = &*it;
  }
  if (responses && !responses->is_null() && !responses->is_object()) {
    return refuse("\"inputResponses\" must be an object (question key -> answer)");
  }
  const bool answers_confirmation =
      responses && responses->is_object() && responses->contains(kConfirmationKey);
  // Without a state of ours, answers are offered, not known to answer our
  // questions: each is taken only when the run asks a question of that key
  // and it has the shape of that question's answer; otherwise it is asked.
  // A confirmation never: a human's yes comes only from the question asked.
  if (!state_text || state_text->is_null()) {
    if (answers_confirmation) return unasked_confirmation();
    if (responses && responses->is_object()) exchange->offered_ = *responses;
    return exchange;
  }
  const std::string refused_state =
      "\"requestState\" was not made by this server for this request, or was changed; call "
      "again without it and without \"inputResponses\"";
  if (!state_text->is_string() ||
      state_text->get_ref<const std::string&>().size() > kMaxStateBytes) {
    return refuse(refused_state);
  }
  if (!exchange->key_) return refuse(refused_state);
  const std::optional<std::string> plain =
      open_sealed(*exchange->key_, state_text->get_ref<const std::string&>());
  if (!plain) return refuse(refused_state);
  // Sealed by us: well-formed, small, flat. Checked all the same.
  json state = json::parse(*plain, nullptr, false);
  if (!state.is_object() || state.value("v", 0) != kStateVersion || !state["o"].is_string() ||
      !state["m"].is_string() || !state["n"].is_string() || !state["a"].is_string() ||
      !state["exp"].is_number_integer() || !state["asked"].is_object() ||
      !state["answers"].is_object()) {
    return refuse(refused_state);
  }
  const RequestBinding& b = exchange->binding_;
  if (state["o"] != b.owner || state["m"] != b.method || state["n"] != b.name ||
      state["a"] != digest(dump(b.arguments))) {
    return refuse("\"requestState\" belongs to another request (another " +
                  std::string(b.method == "tools/call" ? "tool or other arguments"
                                                       : "name or other arguments") +
                  ", or another caller); send it only with the request it came with");
  }
  if (state["exp"].get<long long>() < epoch_ms(now)) {
    return refuse("\"requestState\" has lapsed (it lasts " +
                  std::to_string(kStateLifetime.count()) +
                  " minutes); call again without it and without \"inputResponses\"");
  }
  exchange->answers_ = std::move(state["answers"]);
  if (answers_confirmation && !state["asked"].contains(kConfirmationKey)) {
    return unasked_confirmation();
  }
  if (responses && responses->is_object()) {
    for (const auto& [question, asked] : state["asked"].items()) {
      auto answer = responses->find(question);
      if (answer == responses->end()) continue;  // asked again on this run
      const std::string method = asked.value("m", "");
      const std::string problem = answer_problem(method, *answer);
      if (!problem.empty()) {
        return refuse("inputResponses[" + json(question).dump() + "] answers " + method + " and " +
                      problem);
      }
      exchange->answers_[question] = {
          {"d", asked.value("d", "")}, {"r", *answer}, {"n", asked.value("n", "")}};
    }
  }
  return exchange;
}

ClientAnswer InputExchange::ask(const std::string& method, const json& params,
                                const std::string& key, const json& capabilities) {
  std::lock_guard lock(mutex_);
  ++asked_;
  const std::string question = key.empty() ? "input-" + std::to_string(asked_) : key;
  const char* capability = capability_for(method);
  if (!capability) {
    return {std::nullopt,
            "a client cannot be asked " + method +
                " (only elicitation/create, "
                "sampling/createMessage and roots/list)",
            false};
  }
  if (!capabilities.is_object() || !capabilities.contains(capability)) {
    return {std::nullopt,
            "the client did not declare the " + std::string(capability) +
                " capability, so it cannot be asked " + method,
            false};
  }
  const std::string d = question_digest(method, params);
  if (auto it = answers_.find(question); it != answers_.end() && it->value("d", "") == d) {
    return {(*it)["r"], "", false, it->value("n", "")};
  }
  if (auto it = offered_.find(question);
      it != offered_.end() && question != kConfirmationKey && answer_problem(method, *it).empty()) {
    return {*it, "", false, ""};
  }
  if (questions_.contains(question)) {
    return {std::nullopt, "question " + json(question).dump() + " was asked twice in one run",
            false};
  }
  if (questions_.size() >= kMaxQuestions) {
    return {std::nullopt,
            "a request may ask its client at most " + std::to_string(kMaxQuestions) +
                " questions at once",
            false};
  }
  questions_[question] = {{"method", method}, {"params", params}};
  return {std::nullopt, "the client answers " + method + " with a retry of the request", true};
}

bool InputExchange::input_required() const {
  std::lock_guard lock(mutex_);
  return !questions_.empty();
}

std::variant<json, JsonRpcError> InputExchange::input_required_result(
    std::chrono::system_clock::time_point now) const {
  std::lock_guard lock(mutex_);
  json asked = json::object();
  for (const auto& [question, request] : questions_.items()) {
    asked[question] = {
        {"m", request["method"]},
        {"d", question_digest(request["method"].get<std::string>(), request["params"])},
        {"n", new_answer_id()}};
  }
  // Answers to questions asked again are dropped: their new answer replaces
  // them. The others go on under new ids: this state's answers are not the
  // last one's, which may have been acted on already.
  json answers = json::object();
  for (const auto& [question, answer] : answers_.items()) {
    if (!questions_.contains(question) && answers.size() < kMaxAnswers) {
      json carried = answer;
      carried["n"] = new_answer_id();
      answers[question] = std::move(carried);
    }
  }
  const json state{{"v", kStateVersion},
                   {"o", binding_.owner},
                   {"m", binding_.method},
                   {"n", binding_.name},
                   {"a", digest(dump(binding_.arguments))},
                   {"exp", epoch_ms(now + kStateLifetime)},
                   {"asked", std::move(asked)},
                   {"answers", std::move(answers)}};
  if (!key_) {
    return JsonRpcError::unavailable("toolmux has no key to seal the request's state with");
  }
  std::string sealed = seal(*key_, dump(state));
  if (sealed.size() > kMaxStateBytes) {
    return JsonRpcError::unavailable("the questions and answers of this request are over " +
                                     std::to_string(kMaxStateBytes) +
                                     " bytes once sealed; it cannot ask its client more");
  }
  return json{{"resultType", "input_required"},
              {"inputRequests", questions_},
              {"requestState", std::move(sealed)}};
}

}  // namespace toolmux
