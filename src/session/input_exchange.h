// The questions a request of the 2026-07-28 protocol asks its client, and the
// answers it has (Multi Round-Trip Requests, basic/patterns/mrtr.mdx). A
// handler that asks (CallContext::ask_client) is run again from the start on
// each retry of its request; a question it asked before is answered at once
// from what the retry brought, and a new one ends the run: the request is
// answered with an input_required result carrying every new question and a
// requestState that the client sends back, unread, with its answers.
//
// requestState is sealed (src/base/sealed_box.h) with the server's key: the
// client can neither read nor change it. It holds what the request was (its
// method, the name or URI it named, a digest of its arguments), whose it was
// (the principal the operator's access rules know the caller as), when it
// lapses, the questions last asked (each as a digest, with its method) and
// the answers so far. A state that does not open, lapsed, or came with
// another request or from another principal is refused with -32602; an
// answer to no question asked is ignored, one of the wrong shape refused with
// -32602 naming it. Answers that come without a state (a client that
// answers before it is asked, as MRTR allows) are taken for the questions of
// their keys when they have the right shape; the others are asked. Except a
// human's confirmation: an answer to kConfirmationKey counts only as the
// answer to the question this server asked, in the sealed state that came
// back with it, and one that answers no question of the state (no state at
// all, or one that did not ask it) is refused with -32602. It is never taken
// for any other question either.
//
// Single use: each question asked gets a random id in the state, which its
// answer carries (ClientAnswer::answer_id); an answer carried on into a later
// round's state gets a new id there. Every state thus names its answers
// apart, and whoever acts on an answer once (the confirm stage) can refuse
// the same state and answer sent again.
//
// One InputExchange per run of a request; thread-safe (a handler may ask from
// threads of its own).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "catalog/tool.h"
#include "src/base/jsonrpc_error.h"
#include "src/base/sealed_box.h"
#include "src/base/status.h"

namespace toolmux {

// The key of toolmux's own question to a human, the confirmation of a guarded
// call (src/pipeline/confirm.h), among a 2026-07-28 request's questions.
inline constexpr const char* kConfirmationKey = "io.toolmux/confirm";

// What a requestState is bound to.
struct RequestBinding {
  std::string owner;         // whose request (Session::id of the request's view)
  std::string method;        // "tools/call", "prompts/get", "resources/read"
  std::string name;          // the tool or prompt name, or the resource URI
  nlohmann::json arguments;  // the request's arguments (null when it has none)
};

class InputExchange {
 public:
  // How long a requestState may be sent back: a person may take a while to answer.
  static constexpr std::chrono::minutes kStateLifetime{15};
  // Questions one run may ask, and answers a state may carry.
  static constexpr std::size_t kMaxQuestions = 16;
  static constexpr std::size_t kMaxAnswers = 64;
  // The largest requestState made or accepted, in bytes of its text.
  static constexpr std::size_t kMaxStateBytes = std::size_t{256} * 1024;

  // The exchange of a request with `params` (its requestState and
  // inputResponses, if any), or the -32602 error that refuses them.
  static std::variant<std::shared_ptr<InputExchange>, JsonRpcError> open(
      const nlohmann::json& params, RequestBinding binding, std::shared_ptr<const SealingKey> key,
      std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

  // CallContext::ask_client for a 2026-07-28 client whose declared capabilities
  // are `capabilities`: the answer when the retry brought one to this very
  // question (with its answer_id), else the question is kept for the
  // input_required result and the answer is ClientAnswer::pending.
  ClientAnswer ask(const std::string& method, const nlohmann::json& params, const std::string& key,
                   const nlohmann::json& capabilities);

  // A question is waiting: the request is answered with input_required_result().
  bool input_required() const;
  // {"resultType": "input_required", "inputRequests": {...}, "requestState": "..."};
  // a JsonRpcError (-32603) when the state would be over kMaxStateBytes.
  std::variant<nlohmann::json, JsonRpcError> input_required_result(
      std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;

 private:
  InputExchange(RequestBinding binding, std::shared_ptr<const SealingKey> key)
      : binding_(std::move(binding)), key_(std::move(key)) {}

  const RequestBinding binding_;
  const std::shared_ptr<const SealingKey> key_;
  mutable std::mutex mutex_;
  // key -> {"d": digest of the question, "r": the answer, "n": its id}
  nlohmann::json answers_ = nlohmann::json::object();
  // inputResponses that came without a requestState (but a confirmation):
  // key -> answer.
  nlohmann::json offered_ = nlohmann::json::object();
  // This run's new questions: key -> {"method": ..., "params": ...}
  nlohmann::json questions_ = nlohmann::json::object();
  std::size_t asked_ = 0;  // ask() calls this run (for "input-N" keys)
};

}  // namespace toolmux
