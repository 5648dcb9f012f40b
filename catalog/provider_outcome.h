// What a resource or prompt provider answers (resource_provider.h,
// prompt_provider.h): a value, or the JSON-RPC error the client gets instead.
//
// A provider backed by an upstream MCP server passes the upstream's error on
// as it came (its code, message and data); a transport failure or a timeout is
// ProviderError::unavailable. ProviderError::resource_not_found is also how a
// provider says "not mine": the router then asks the next provider.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

namespace toolmux {

struct ProviderError {
  // The JSON-RPC codes the MCP spec gives these errors.
  static constexpr int kResourceNotFound = -32002;
  static constexpr int kInvalidParams = -32602;
  static constexpr int kInternalError = -32603;

  int code = kInternalError;
  std::string message;
  nlohmann::json data;  // null = none

  // -32002 "Resource not found", data {"uri": uri} (MCP resources, error handling).
  static ProviderError resource_not_found(std::string_view uri) {
    return {kResourceNotFound, "Resource not found", {{"uri", uri}}};
  }
  // -32602 "Invalid params: <what>": the request named something that does not
  // exist or gave a bad argument.
  static ProviderError invalid_params(std::string_view what) {
    return {kInvalidParams, "Invalid params: " + std::string(what), nullptr};
  }
  // -32603 with `why`: the provider could not answer (an upstream is down, a
  // deadline passed, ...).
  static ProviderError unavailable(std::string why) {
    return {kInternalError, std::move(why), nullptr};
  }
  bool is_not_found() const { return code == kResourceNotFound; }
};

// A value of T or a ProviderError; implicitly made from either.
template <typename T>
class Outcome {
 public:
  Outcome(T value) : value_(std::move(value)) {}              // NOLINT: implicit by design
  Outcome(ProviderError error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  // Only when ok().
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  // Only when !ok().
  const ProviderError& error() const { return error_; }

 private:
  std::optional<T> value_;
  ProviderError error_;
};

// An outcome without a value (subscribe).
using Status = Outcome<std::monostate>;
inline Status success() { return Status(std::monostate{}); }

}  // namespace toolmux
