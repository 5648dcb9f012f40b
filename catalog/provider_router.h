// Routes resources, prompts and completion requests to the providers that
// serve them, several providers at once (native ones, offloaded results,
// upstream MCP servers).
//
// - Listings are the providers' listings concatenated, in provider order. A
//   provider that fails is left out with a problem naming it; the rest list.
//   A resource URI, or a prompt name, already listed by an earlier provider is
//   left out of a later one's (names must be unique across providers).
// - A resource URI goes to the provider that last listed it, else to the first
//   whose resource template it matches (catalog/uri_template.h), else the
//   providers are asked in order: the first answer other than "Resource not
//   found" is the answer. resources/subscribe finds the owner the same way.
// - A prompt name goes to the provider that listed it; its arguments are
//   checked against the listed prompt first (every required one given, none
//   unknown), so that a provider sees only arguments it declared.
// - completion/complete goes to the prompt's provider (ref/prompt) or to the
//   provider of the resource template (ref/resource); the argument must be one
//   of the prompt's arguments or the template's variables.
//
// What was listed is remembered for routing until a provider reports that its
// list changed (ProviderEvents). Thread-safe; providers are called outside
// the router's lock, from the caller's thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/completion.h"
#include "catalog/prompt_provider.h"
#include "catalog/provider_events.h"
#include "catalog/provider_outcome.h"
#include "catalog/resource_provider.h"
#include "catalog/tool.h"

namespace toolmux {

// What completion/complete asks about: a prompt (ref/prompt, by name) or a
// resource template (ref/resource, by its URI template).
struct CompletionRef {
  enum class Kind { prompt, resource };
  Kind kind = Kind::prompt;
  std::string name;  // the prompt's name, or the template's uriTemplate
};

template <typename T>
struct Listing {
  std::vector<T> items;
  // Why some providers or entries were left out, one sentence each, e.g.
  // `resource provider 2: upstream "docs" is not running`.
  std::vector<std::string> problems;
};

class ProviderRouter final : public ProviderEventSink,
                             public std::enable_shared_from_this<ProviderRouter> {
 public:
  // Connects each provider's events to the router.
  static std::shared_ptr<ProviderRouter> create(
      std::vector<std::shared_ptr<ResourceProvider>> resources,
      std::vector<std::shared_ptr<PromptProvider>> prompts);

  // Where the providers' events go on to (the server); replaces the previous.
  void connect(std::weak_ptr<ProviderEventSink> sink);

  Listing<Resource> list_resources(CallContext& context);
  Listing<ResourceTemplate> list_resource_templates(CallContext& context);
  Outcome<std::vector<ResourceContents>> read_resource(const std::string& uri,
                                                       CallContext& context);
  // Asks the owner of `uri` to subscribe the caller; "Resource not found"
  // when no provider has it.
  ProviderStatus subscribe(const std::string& uri, CallContext& context);
  // Tells the owner found by subscribe that the last subscriber left.
  void unsubscribe(const std::string& uri);

  Listing<Prompt> list_prompts(CallContext& context);
  Outcome<PromptResult> get_prompt(const std::string& name,
                                   const std::map<std::string, std::string>& arguments,
                                   CallContext& context);

  Outcome<Completion> complete(const CompletionRef& ref, const CompletionRequest& request,
                               CallContext& context);

  // ProviderEventSink: forgets what the changed lists held, then forwards.
  void resource_updated(const std::string& uri) override;
  void resources_list_changed() override;
  void prompts_list_changed() override;

 private:
  ProviderRouter(std::vector<std::shared_ptr<ResourceProvider>> resources,
                 std::vector<std::shared_ptr<PromptProvider>> prompts);

  struct ListedPrompt {
    std::size_t provider = 0;
    Prompt prompt;
  };
  // The provider (index) that owns `uri` by listing or template, if any.
  std::optional<std::size_t> resource_owner(const std::string& uri, CallContext& context);
  // The templates of every provider, listing those not known yet.
  std::vector<std::vector<ResourceTemplate>> templates(CallContext& context);
  // The prompt `name` as listed, listing the prompts again when it is not known.
  std::optional<ListedPrompt> find_prompt(const std::string& name, CallContext& context);
  std::shared_ptr<ProviderEventSink> sink() const;

  const std::vector<std::shared_ptr<ResourceProvider>> resources_;
  const std::vector<std::shared_ptr<PromptProvider>> prompts_;

  mutable std::mutex mutex_;
  std::weak_ptr<ProviderEventSink> sink_;
  std::vector<std::set<std::string, std::less<>>> listed_uris_;          // per resource provider
  std::vector<std::optional<std::vector<ResourceTemplate>>> templates_;  // per resource provider
  std::optional<std::map<std::string, ListedPrompt, std::less<>>> listed_prompts_;
  std::map<std::string, std::size_t> subscribed_owner_;  // uri -> resource provider
};

}  // namespace toolmux
