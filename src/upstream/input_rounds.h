// A modern upstream's input_required result (Multi Round-Trip Requests,
// basic/patterns/mrtr.mdx), read and relayed: its questions (inputRequests)
// go to the client toolmux serves the call for, through
// CallContext::ask_client, each under the upstream's own key; their answers
// become the inputResponses of the retry, which also carries the upstream's
// requestState exactly as it came (McpClient::request makes the retries).
//
// A question is put to the client only when the client declared the
// capability it needs (context.client_capabilities()); otherwise the request
// fails with -32021 naming it, nothing asked. A 2026-07-28 client answers in a
// retry of its own call (ClientAnswer::pending): every question of the round
// is asked first, so that they reach it together, and the relay stops there.
// Pure over the CallContext; no state.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/base/status.h"

namespace toolmux {

struct InputRequired {
  // key -> {"method": ..., "params": {...}}, in key order.
  std::vector<std::pair<std::string, nlohmann::json>> requests;
  std::optional<std::string> request_state;
};

// Questions one round may ask; more are refused (naming the limit).
inline constexpr std::size_t kMaxInputRequests = 16;

// Reads an input_required result: an object whose inputRequests (optional)
// maps keys to {"method": one of elicitation/create, sampling/createMessage,
// roots/list; "params": an object (optional for roots/list)} and whose
// requestState (optional) is a string; at least one of the two. Otherwise
// invalid_argument naming what is wrong ("inputRequests/who/method must be
// ...").
Result<InputRequired> read_input_required(const nlohmann::json& result);

struct InputAnswers {
  enum class Kind {
    answered,  // `responses` holds an answer to every question
    pending,   // the client answers in a retry of its call; the call is stopped
    failed,    // `error` is the JSON-RPC error object the request fails with
  };
  Kind kind = Kind::answered;
  nlohmann::json responses = nlohmann::json::object();  // key -> the client's result
  nlohmann::json error;
};

// Puts `required`'s questions to the client of `context`; `upstream` names
// the upstream in errors.
InputAnswers answer_input_requests(const InputRequired& required, CallContext& context,
                                   const std::string& upstream);

}  // namespace toolmux
