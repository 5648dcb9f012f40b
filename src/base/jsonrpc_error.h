// A JSON-RPC error as it is answered: code, message and optional data
// (JSON-RPC 2.0 section 5.1). The one error struct of the protocol layers:
// what a resource or prompt provider answers instead of a value
// (catalog/provider_outcome.h) and what a tools/call is answered with instead
// of a result. A plain value type; nothing here throws.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "src/base/jsonrpc.h"

namespace toolmux {

struct JsonRpcError {
  // The JSON-RPC codes the MCP spec gives the errors made below.
  static constexpr int kResourceNotFound = -32002;
  static constexpr int kInvalidParams = jsonrpc::kInvalidParams;
  static constexpr int kInternalError = jsonrpc::kInternalError;
  // MissingRequiredClientCapabilityError (2026-07-28, basic/index.mdx).
  static constexpr int kMissingClientCapability = -32021;

  int code = kInternalError;
  std::string message;
  nlohmann::json data;  // null = none

  // -32002 "Resource not found", data {"uri": uri} (MCP resources, error handling).
  static JsonRpcError resource_not_found(std::string_view uri) {
    return {kResourceNotFound, "Resource not found", {{"uri", uri}}};
  }
  // -32602 "Invalid params: <what>": the request named something that does not
  // exist or gave a bad argument.
  static JsonRpcError invalid_params(std::string_view what) {
    return {kInvalidParams, "Invalid params: " + std::string(what), nullptr};
  }
  // -32603 with `why`: the answer could not be made (an upstream is down, a
  // deadline passed, ...).
  static JsonRpcError unavailable(std::string why) {
    return {kInternalError, std::move(why), nullptr};
  }
  // -32021: serving the request needs the client capabilities `missing` (an
  // object, {"sampling": {}}), which the client did not declare; data
  // {"requiredCapabilities": missing}.
  static JsonRpcError missing_client_capability(const nlohmann::json& missing) {
    std::string names;
    for (const auto& [name, value] : missing.items()) names += (names.empty() ? "" : ", ") + name;
    return {kMissingClientCapability,
            "Missing required client capability: the client did not declare " + names,
            {{"requiredCapabilities", missing}}};
  }
  bool is_not_found() const { return code == kResourceNotFound; }
};

}  // namespace toolmux
