#include "src/upstream/input_rounds.h"

#include "src/base/jsonrpc.h"
#include "src/upstream/protocol_era.h"

namespace toolmux {
namespace {

using nlohmann::json;

json error_object(int code, std::string message, json data = nullptr) {
  json error = {{"code", code}, {"message", std::move(message)}};
  if (!data.is_null()) error["data"] = std::move(data);
  return error;
}

// A key as part of a JSON pointer-like path: "~" and "/" escaped.
std::string path_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Result<InputRequired> read_input_required(const json& result) {
  if (!result.is_object()) return Status::invalid_argument("the result is not an object");
  InputRequired out;
  auto requests = result.find("inputRequests");
  auto state = result.find("requestState");
  if (requests == result.end() && state == result.end()) {
    return Status::invalid_argument("it has neither inputRequests nor requestState");
  }
  if (state != result.end()) {
    if (!state->is_string()) return Status::invalid_argument("requestState must be a string");
    out.request_state = state->get<std::string>();
  }
  if (requests == result.end()) return out;
  if (!requests->is_object()) return Status::invalid_argument("inputRequests must be an object");
  if (requests->size() > kMaxInputRequests) {
    return Status::invalid_argument("inputRequests holds " + std::to_string(requests->size()) +
                                    " questions; toolmux relays at most " +
                                    std::to_string(kMaxInputRequests) + " in one round");
  }
  for (const auto& [key, request] : requests->items()) {
    const std::string at = "inputRequests/" + path_token(key);
    if (!request.is_object()) return Status::invalid_argument(at + " must be an object");
    const json method = request.value("method", json());
    if (!method.is_string() || capability_for(method.get<std::string>()).empty()) {
      return Status::invalid_argument(
          at + "/method must be elicitation/create, sampling/createMessage or roots/list");
    }
    json params = request.value("params", json());
    if (params.is_null() && method == "roots/list") params = json::object();
    if (!params.is_object()) return Status::invalid_argument(at + "/params must be an object");
    out.requests.emplace_back(key, json{{"method", method}, {"params", std::move(params)}});
  }
  return out;
}

InputAnswers answer_input_requests(const InputRequired& required, CallContext& context,
                                   const std::string& upstream) {
  InputAnswers out;
  const json declared = context.client_capabilities();
  // Every question is checked before any is asked: a round is answered whole or not at all.
  for (const auto& [key, request] : required.requests) {
    const std::string method = request["method"].get<std::string>();
    const std::string capability(capability_for(method));
    if (!declared.is_object() || !declared.contains(capability)) {
      out.kind = InputAnswers::Kind::failed;
      out.error =
          error_object(kMissingRequiredClientCapabilityCode,
                       "upstream \"" + upstream + "\" asked for " + method + " (\"" + key +
                           "\"), but the client did not declare the " + capability + " capability",
                       {{"requiredCapabilities", {{capability, json::object()}}}});
      return out;
    }
  }
  bool pending = false;
  for (const auto& [key, request] : required.requests) {
    const std::string method = request["method"].get<std::string>();
    ClientAnswer answer = context.ask_client(method, request["params"], {}, key);
    if (answer.pending) {
      // Asked in the call's own answer: the rest go with it.
      pending = true;
      continue;
    }
    if (pending) continue;
    if (!answer.result) {
      out.kind = InputAnswers::Kind::failed;
      out.error = error_object(jsonrpc::kInternalError,
                               "upstream \"" + upstream + "\" asked the client " + method + " (\"" +
                                   key + "\"), which got no answer: " + answer.error);
      return out;
    }
    out.responses[key] = std::move(*answer.result);
  }
  if (pending) {
    out.kind = InputAnswers::Kind::pending;
    out.responses = json::object();
  }
  return out;
}

}  // namespace toolmux
