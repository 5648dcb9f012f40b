#include "catalog/prompt_provider.h"

namespace toolmux {

nlohmann::json Prompt::to_json() const {
  nlohmann::json out{{"name", name}};
  if (!title.empty()) out["title"] = title;
  if (!description.empty()) out["description"] = description;
  if (!arguments.empty()) {
    out["arguments"] = nlohmann::json::array();
    for (const PromptArgument& a : arguments) {
      nlohmann::json arg{{"name", a.name}};
      if (!a.title.empty()) arg["title"] = a.title;
      if (!a.description.empty()) arg["description"] = a.description;
      if (a.required) arg["required"] = true;
      out["arguments"].push_back(std::move(arg));
    }
  }
  return out;
}

nlohmann::json PromptResult::to_json() const {
  nlohmann::json out{{"messages", nlohmann::json::array()}};
  if (!description.empty()) out["description"] = description;
  for (const PromptMessage& m : messages) {
    out["messages"].push_back({{"role", m.role}, {"content", m.content}});
  }
  return out;
}

Outcome<Completion> PromptProvider::complete(const std::string&, const CompletionRequest&,
                                             CallContext&) {
  return Completion{};
}

}  // namespace toolmux
