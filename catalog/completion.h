// completion/complete: suggestions for the value of one argument of a prompt
// or of a resource template, as the user types it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolmux {

struct CompletionRequest {
  std::string argument;  // the argument's name (a prompt argument or a template variable)
  std::string value;     // what the user typed so far
  // The values of the other arguments already given (context.arguments).
  std::map<std::string, std::string> context_arguments;
};

struct Completion {
  // At most kMaxValues are sent; the server cuts longer lists and sets has_more.
  static constexpr std::size_t kMaxValues = 100;
  std::vector<std::string> values;
  std::optional<std::uint64_t> total;  // how many there are in all, when known
  bool has_more = false;

  // The CompleteResult's "completion" object, with values cut to kMaxValues.
  nlohmann::json to_json() const;
};

// The candidates that start with `prefix`, in their order.
Completion complete_from(const std::vector<std::string>& candidates, std::string_view prefix);

}  // namespace toolmux
