#include "catalog/provider_router.h"

#include <algorithm>
#include <utility>

#include "catalog/uri_template.h"

namespace toolmux {
namespace {

std::string resource_provider_label(std::size_t index) {
  return "resource provider " + std::to_string(index + 1);
}

std::string prompt_provider_label(std::size_t index) {
  return "prompt provider " + std::to_string(index + 1);
}

std::string in_quotes(const std::string& text) { return nlohmann::json(text).dump(); }

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + in_quotes(n);
  return out;
}

// -32602 for arguments the prompt does not declare or required ones missing.
std::optional<ProviderError> check_prompt_arguments(
    const Prompt& prompt, const std::map<std::string, std::string>& arguments) {
  std::vector<std::string> declared;
  for (const PromptArgument& a : prompt.arguments) declared.push_back(a.name);
  for (const auto& [name, value] : arguments) {
    if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
      return ProviderError::invalid_params(
          "prompt " + in_quotes(prompt.name) + " has no argument " + in_quotes(name) +
          (declared.empty() ? "; it takes none" : "; its arguments are " + joined_names(declared)));
    }
  }
  std::vector<std::string> missing;
  for (const PromptArgument& a : prompt.arguments) {
    if (a.required && !arguments.count(a.name)) missing.push_back(a.name);
  }
  if (!missing.empty()) {
    return ProviderError::invalid_params(
        "prompt " + in_quotes(prompt.name) +
        (missing.size() == 1 ? " needs the argument " : " needs the arguments ") +
        joined_names(missing));
  }
  return std::nullopt;
}

}  // namespace

std::shared_ptr<ProviderRouter> ProviderRouter::create(
    std::vector<std::shared_ptr<ResourceProvider>> resources,
    std::vector<std::shared_ptr<PromptProvider>> prompts) {
  std::shared_ptr<ProviderRouter> router(
      new ProviderRouter(std::move(resources), std::move(prompts)));
  for (const auto& p : router->resources_) p->events().connect(router);
  for (const auto& p : router->prompts_) p->events().connect(router);
  return router;
}

ProviderRouter::ProviderRouter(std::vector<std::shared_ptr<ResourceProvider>> resources,
                               std::vector<std::shared_ptr<PromptProvider>> prompts)
    : resources_(std::move(resources)),
      prompts_(std::move(prompts)),
      listed_uris_(resources_.size()),
      templates_(resources_.size()) {}

void ProviderRouter::connect(std::weak_ptr<ProviderEventSink> sink) {
  std::lock_guard lock(mutex_);
  sink_ = std::move(sink);
}

std::shared_ptr<ProviderEventSink> ProviderRouter::sink() const {
  std::lock_guard lock(mutex_);
  return sink_.lock();
}

Listing<Resource> ProviderRouter::list_resources(CallContext& context) {
  Listing<Resource> out;
  std::set<std::string, std::less<>> seen;
  for (std::size_t i = 0; i < resources_.size() && !context.cancelled(); ++i) {
    auto listed = resources_[i]->list_resources(context);
    if (!listed.ok()) {
      out.problems.push_back(resource_provider_label(i) + ": " + listed.error().message);
      continue;
    }
    std::set<std::string, std::less<>> uris;
    for (Resource& r : listed.value()) {
      if (r.uri.empty() || r.name.empty()) {
        out.problems.push_back(resource_provider_label(i) + ": a resource without " +
                               (r.uri.empty() ? "a uri" : "a name") + " (" +
                               in_quotes(r.uri.empty() ? r.name : r.uri) + ") is left out");
        continue;
      }
      if (!seen.insert(r.uri).second) {
        out.problems.push_back(resource_provider_label(i) + ": resource " + in_quotes(r.uri) +
                               " is left out: an earlier provider lists that URI");
        continue;
      }
      uris.insert(r.uri);
      out.items.push_back(std::move(r));
    }
    std::lock_guard lock(mutex_);
    listed_uris_[i] = std::move(uris);
  }
  return out;
}

Listing<ResourceTemplate> ProviderRouter::list_resource_templates(CallContext& context) {
  Listing<ResourceTemplate> out;
  for (std::size_t i = 0; i < resources_.size() && !context.cancelled(); ++i) {
    auto listed = resources_[i]->list_resource_templates(context);
    if (!listed.ok()) {
      out.problems.push_back(resource_provider_label(i) + ": " + listed.error().message);
      continue;
    }
    for (const ResourceTemplate& t : listed.value()) {
      if (t.uri_template.empty() || t.name.empty()) {
        out.problems.push_back(resource_provider_label(i) + ": a resource template without " +
                               (t.uri_template.empty() ? "a uriTemplate" : "a name") +
                               " is left out");
        continue;
      }
      out.items.push_back(t);
    }
    std::lock_guard lock(mutex_);
    templates_[i] = listed.value();
  }
  return out;
}

std::vector<std::vector<ResourceTemplate>> ProviderRouter::templates(CallContext& context) {
  std::vector<std::vector<ResourceTemplate>> out(resources_.size());
  for (std::size_t i = 0; i < resources_.size(); ++i) {
    {
      std::lock_guard lock(mutex_);
      if (templates_[i]) {
        out[i] = *templates_[i];
        continue;
      }
    }
    // Not known yet: ask (a failure counts as none this time, and is asked again).
    auto listed = resources_[i]->list_resource_templates(context);
    if (!listed.ok()) continue;
    out[i] = listed.value();
    std::lock_guard lock(mutex_);
    templates_[i] = std::move(listed.value());
  }
  return out;
}

std::optional<std::size_t> ProviderRouter::resource_owner(const std::string& uri,
                                                          CallContext& context) {
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < listed_uris_.size(); ++i) {
      if (listed_uris_[i].count(uri)) return i;
    }
  }
  const auto all = templates(context);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (const ResourceTemplate& t : all[i]) {
      if (match_uri_template(t.uri_template, uri)) return i;
    }
  }
  return std::nullopt;
}

Outcome<std::vector<ResourceContents>> ProviderRouter::read_resource(const std::string& uri,
                                                                     CallContext& context) {
  if (auto owner = resource_owner(uri, context)) {
    return resources_[*owner]->read_resource(uri, context);
  }
  for (std::size_t i = 0; i < resources_.size() && !context.cancelled(); ++i) {
    auto read = resources_[i]->read_resource(uri, context);
    if (read.ok() || !read.error().is_not_found()) return read;
  }
  return ProviderError::resource_not_found(uri);
}

ProviderStatus ProviderRouter::subscribe(const std::string& uri, CallContext& context) {
  std::optional<std::size_t> owner = resource_owner(uri, context);
  for (std::size_t i = 0; !owner && i < resources_.size() && !context.cancelled(); ++i) {
    auto read = resources_[i]->read_resource(uri, context);
    if (read.ok()) owner = i;
    if (!read.ok() && !read.error().is_not_found()) return read.error();
  }
  if (!owner) return ProviderError::resource_not_found(uri);
  ProviderStatus subscribed = resources_[*owner]->subscribe(uri, context);
  if (subscribed.ok()) {
    std::lock_guard lock(mutex_);
    subscribed_owner_[uri] = *owner;
  }
  return subscribed;
}

void ProviderRouter::unsubscribe(const std::string& uri) {
  std::optional<std::size_t> owner;
  {
    std::lock_guard lock(mutex_);
    auto it = subscribed_owner_.find(uri);
    if (it == subscribed_owner_.end()) return;
    owner = it->second;
    subscribed_owner_.erase(it);
  }
  resources_[*owner]->unsubscribe(uri);
}

Listing<Prompt> ProviderRouter::list_prompts(CallContext& context) {
  Listing<Prompt> out;
  std::map<std::string, ListedPrompt, std::less<>> by_name;
  for (std::size_t i = 0; i < prompts_.size() && !context.cancelled(); ++i) {
    auto listed = prompts_[i]->list_prompts(context);
    if (!listed.ok()) {
      out.problems.push_back(prompt_provider_label(i) + ": " + listed.error().message);
      continue;
    }
    for (Prompt& p : listed.value()) {
      if (p.name.empty()) {
        out.problems.push_back(prompt_provider_label(i) + ": a prompt without a name is left out");
        continue;
      }
      if (by_name.count(p.name)) {
        out.problems.push_back(prompt_provider_label(i) + ": prompt " + in_quotes(p.name) +
                               " is left out: " + prompt_provider_label(by_name[p.name].provider) +
                               " has a prompt of that name");
        continue;
      }
      by_name[p.name] = {i, p};
      out.items.push_back(std::move(p));
    }
  }
  if (!context.cancelled()) {
    std::lock_guard lock(mutex_);
    listed_prompts_ = std::move(by_name);
  }
  return out;
}

std::optional<ProviderRouter::ListedPrompt> ProviderRouter::find_prompt(const std::string& name,
                                                                        CallContext& context) {
  {
    std::lock_guard lock(mutex_);
    if (listed_prompts_) {
      auto it = listed_prompts_->find(name);
      if (it != listed_prompts_->end()) return it->second;
    }
  }
  // Unknown: the lists may have changed since, so list again.
  list_prompts(context);
  std::lock_guard lock(mutex_);
  if (listed_prompts_) {
    auto it = listed_prompts_->find(name);
    if (it != listed_prompts_->end()) return it->second;
  }
  return std::nullopt;
}

Outcome<PromptResult> ProviderRouter::get_prompt(
    const std::string& name, const std::map<std::string, std::string>& arguments,
    CallContext& context) {
  auto listed = find_prompt(name, context);
  if (!listed) return ProviderError::invalid_params("unknown prompt " + in_quotes(name));
  if (auto bad = check_prompt_arguments(listed->prompt, arguments)) return *bad;
  return prompts_[listed->provider]->get_prompt(name, arguments, context);
}

Outcome<Completion> ProviderRouter::complete(const CompletionRef& ref,
                                             const CompletionRequest& request,
                                             CallContext& context) {
  if (ref.kind == CompletionRef::Kind::prompt) {
    auto listed = find_prompt(ref.name, context);
    if (!listed) return ProviderError::invalid_params("unknown prompt " + in_quotes(ref.name));
    std::vector<std::string> names;
    for (const PromptArgument& a : listed->prompt.arguments) names.push_back(a.name);
    if (std::find(names.begin(), names.end(), request.argument) == names.end()) {
      return ProviderError::invalid_params(
          "prompt " + in_quotes(ref.name) + " has no argument " + in_quotes(request.argument) +
          (names.empty() ? "; it takes none" : "; its arguments are " + joined_names(names)));
    }
    return prompts_[listed->provider]->complete(ref.name, request, context);
  }
  const auto all = templates(context);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (const ResourceTemplate& t : all[i]) {
      if (t.uri_template != ref.name) continue;
      const auto variables =
          uri_template_variables(t.uri_template).value_or(std::vector<std::string>{});
      if (std::find(variables.begin(), variables.end(), request.argument) == variables.end()) {
        return ProviderError::invalid_params(
            "resource template " + in_quotes(ref.name) + " has no variable " +
            in_quotes(request.argument) +
            (variables.empty() ? "" : "; its variables are " + joined_names(variables)));
      }
      return resources_[i]->complete(t.uri_template, request, context);
    }
  }
  return ProviderError::invalid_params("unknown resource template " + in_quotes(ref.name));
}

void ProviderRouter::resource_updated(const std::string& uri) {
  if (auto s = sink()) s->resource_updated(uri);
}

void ProviderRouter::resources_list_changed() {
  {
    std::lock_guard lock(mutex_);
    for (auto& uris : listed_uris_) uris.clear();
    for (auto& t : templates_) t.reset();
  }
  if (auto s = sink()) s->resources_list_changed();
}

void ProviderRouter::prompts_list_changed() {
  {
    std::lock_guard lock(mutex_);
    listed_prompts_.reset();
  }
  if (auto s = sink()) s->prompts_list_changed();
}

}  // namespace toolmux
