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
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "src/base/jsonrpc_error.h"

namespace toolmux {

// The JSON-RPC error a provider answers instead of a value.
using ProviderError = JsonRpcError;

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
using ProviderStatus = Outcome<std::monostate>;
inline ProviderStatus success() { return ProviderStatus(std::monostate{}); }

}  // namespace toolmux
