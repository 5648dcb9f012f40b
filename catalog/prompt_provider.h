// Prompts (MCP server feature "prompts"): what a prompt provider offers and
// the interface it implements. A program that embeds toolmux adds its own
// providers (src/app/toolmux.h); an upstream MCP server's prompts come through one
// too. The threading and error contract is resource_provider.h's: called
// concurrently, off the reader thread, with the request's CallContext;
// failures are ProviderErrors, never exceptions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/completion.h"
#include "catalog/provider_events.h"
#include "catalog/provider_outcome.h"
#include "catalog/tool.h"

namespace toolmux {

struct PromptArgument {
  std::string name;  // required
  std::string title;
  std::string description;
  bool required = false;
};

// One entry of prompts/list. Names are unique across all providers: a later
// provider's prompt with a name already listed is left out (and logged).
struct Prompt {
  std::string name;  // required
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  nlohmann::json to_json() const;
};

struct PromptMessage {
  std::string role;        // "user" or "assistant"
  nlohmann::json content;  // one content block: {"type":"text","text":...}, image, resource, ...
};

// A prompts/get result.
struct PromptResult {
  std::string description;  // optional
  std::vector<PromptMessage> messages;
  nlohmann::json to_json() const;
};

class PromptProvider {
 public:
  virtual ~PromptProvider() = default;

  // Every prompt this provider offers the caller.
  virtual Outcome<std::vector<Prompt>> list_prompts(CallContext& context) = 0;
  // The prompt `name` (one it listed) filled in with `arguments`. The server
  // has already checked them against the listed Prompt: every required one is
  // there and none is unknown.
  virtual Outcome<PromptResult> get_prompt(const std::string& name,
                                           const std::map<std::string, std::string>& arguments,
                                           CallContext& context) = 0;
  // completion/complete for `request.argument` of the prompt `name`. No
  // suggestions by default.
  virtual Outcome<Completion> complete(const std::string& name, const CompletionRequest& request,
                                       CallContext& context);

  // Where this provider reports changes (prompts_list_changed); the server connects it.
  ProviderEvents& events() { return events_; }

 private:
  ProviderEvents events_;
};

}  // namespace toolmux
