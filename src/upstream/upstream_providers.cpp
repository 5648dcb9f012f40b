#include "src/upstream/upstream_providers.h"

#include <chrono>
#include <utility>
#include <vector>

namespace toolmux {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// An unsubscribe has no request of its own to take a deadline from.
constexpr std::chrono::seconds kUnsubscribeTimeout{10};
// A bound on pages, so an upstream that repeats a cursor cannot loop us.
constexpr int kMaxPages = 1000;

std::string text_field(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

ProviderError error_from(const McpClient::Outcome& outcome) {
  if (outcome.failure == McpClient::Failure::error && outcome.error_object.is_object()) {
    const json& e = outcome.error_object;
    ProviderError error;
    error.code = e.value("code", json(ProviderError::kInternalError)).is_number_integer()
                     ? e["code"].get<int>()
                     : ProviderError::kInternalError;
    error.message = text_field(e, "message");
    error.data = e.value("data", json());
    return error;
  }
  return ProviderError::unavailable(outcome.error);
}

// Sends `method` and returns the result object, or the error to answer with.
Outcome<json> ask(Upstream& upstream, const std::string& method, json params,
                  CallContext& context) {
  McpClient::Outcome outcome =
      upstream.request(method, std::move(params), context.deadline(), &context);
  if (!outcome.result) return error_from(outcome);
  if (!outcome.result->is_object()) {
    return ProviderError::unavailable("upstream \"" + upstream.name() + "\" answered " + method +
                                      " with something else than an object");
  }
  return *outcome.result;
}

// Every page of a list method: the items under `key`.
Outcome<std::vector<json>> ask_all(Upstream& upstream, const std::string& method, const char* key,
                                   CallContext& context) {
  std::vector<json> items;
  json cursor;
  for (int page = 0; page < kMaxPages; ++page) {
    json params = json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    Outcome<json> answer = ask(upstream, method, std::move(params), context);
    if (!answer.ok()) return answer.error();
    const json& result = answer.value();
    auto list = result.find(key);
    if (list == result.end() || !list->is_array()) {
      return ProviderError::unavailable("upstream \"" + upstream.name() + "\" answered " + method +
                                        " without a " + key + " array");
    }
    for (const json& item : *list) {
      if (item.is_object()) items.push_back(item);
    }
    auto next = result.find("nextCursor");
    if (next == result.end() || !next->is_string()) return items;
    cursor = *next;
  }
  return ProviderError::unavailable("upstream \"" + upstream.name() + "\" kept answering " +
                                    method + " with more pages");
}

bool declares(const Upstream& upstream, const char* capability) {
  const json capabilities = upstream.capabilities();
  return capabilities.is_object() && capabilities.contains(capability);
}

Outcome<Completion> completion_from(Outcome<json> answer) {
  if (!answer.ok()) return answer.error();
  const json completion = answer.value().value("completion", json::object());
  Completion out;
  if (completion.contains("values") && completion["values"].is_array()) {
    for (const json& value : completion["values"]) {
      if (value.is_string()) out.values.push_back(value.get<std::string>());
    }
  }
  if (completion.contains("total") && completion["total"].is_number_unsigned()) {
    out.total = completion["total"].get<std::uint64_t>();
  }
  out.has_more = completion.value("hasMore", false);
  return out;
}

json completion_params(json ref, const CompletionRequest& request) {
  json params = {{"ref", std::move(ref)},
                 {"argument", {{"name", request.argument}, {"value", request.value}}}};
  if (!request.context_arguments.empty()) {
    params["context"]["arguments"] = request.context_arguments;
  }
  return params;
}

// The fields a Resource and a ResourceTemplate share, from the upstream's entry.
template <typename Entry>
void read_described(Entry& entry, const json& item) {
  entry.name = text_field(item, "name");
  entry.title = text_field(item, "title");
  entry.description = text_field(item, "description");
  entry.mime_type = text_field(item, "mimeType");
  entry.annotations = item.value("annotations", json());
}

class UpstreamResources final : public ResourceProvider {
 public:
  explicit UpstreamResources(std::shared_ptr<Upstream> upstream) : upstream_(std::move(upstream)) {}

  Outcome<std::vector<Resource>> list_resources(CallContext& context) override {
    if (!declares(*upstream_, "resources")) return std::vector<Resource>{};
    auto listed = ask_all(*upstream_, "resources/list", "resources", context);
    if (!listed.ok()) return listed.error();
    std::vector<Resource> out;
    for (const json& item : listed.value()) {
      Resource resource;
      resource.uri = text_field(item, "uri");
      if (resource.uri.empty()) continue;
      read_described(resource, item);
      if (item.contains("size") && item["size"].is_number_unsigned()) {
        resource.size = item["size"].get<std::uint64_t>();
      }
      out.push_back(std::move(resource));
    }
    return out;
  }

  Outcome<std::vector<ResourceTemplate>> list_resource_templates(CallContext& context) override {
    if (!declares(*upstream_, "resources")) return std::vector<ResourceTemplate>{};
    auto listed = ask_all(*upstream_, "resources/templates/list", "resourceTemplates", context);
    if (!listed.ok()) return listed.error();
    std::vector<ResourceTemplate> out;
    for (const json& item : listed.value()) {
      ResourceTemplate entry;
      entry.uri_template = text_field(item, "uriTemplate");
      if (entry.uri_template.empty()) continue;
      read_described(entry, item);
      out.push_back(std::move(entry));
    }
    return out;
  }

  Outcome<std::vector<ResourceContents>> read_resource(const std::string& uri,
                                                       CallContext& context) override {
    if (!declares(*upstream_, "resources")) return ProviderError::resource_not_found(uri);
    Outcome<json> answer = ask(*upstream_, "resources/read", {{"uri", uri}}, context);
    if (!answer.ok()) return answer.error();
    std::vector<ResourceContents> out;
    const json contents = answer.value().value("contents", json::array());
    for (const json& item : contents) {
      if (!item.is_object()) continue;
      if (item.contains("blob")) {
        out.push_back(ResourceContents::blob_of(
            text_field(item, "uri"), text_field(item, "mimeType"), text_field(item, "blob")));
      } else {
        out.push_back(ResourceContents::text_of(
            text_field(item, "uri"), text_field(item, "mimeType"), text_field(item, "text")));
      }
    }
    return out;
  }

  ProviderStatus subscribe(const std::string& uri, CallContext& context) override {
    const json resources = upstream_->capabilities().value("resources", json::object());
    if (!resources.is_object() || !resources.value("subscribe", false)) {
      return ProviderError::invalid_params("upstream \"" + upstream_->name() +
                                           "\" offers no subscriptions to " + uri);
    }
    if (upstream_->era() == ProtocolEra::modern) {
      // No resources/subscribe in 2026-07-28: the URI joins its subscription.
      if (Status subscribed = upstream_->subscribe_resource(uri); !subscribed.ok()) {
        return ProviderError::invalid_params(subscribed.message());
      }
      return success();
    }
    Outcome<json> answer = ask(*upstream_, "resources/subscribe", {{"uri", uri}}, context);
    if (!answer.ok()) return answer.error();
    return success();
  }

  void unsubscribe(const std::string& uri) override {
    if (upstream_->era() == ProtocolEra::modern) {
      upstream_->unsubscribe_resource(uri);
      return;
    }
    upstream_->request("resources/unsubscribe", {{"uri", uri}}, Clock::now() + kUnsubscribeTimeout,
                       nullptr);
  }

  Outcome<Completion> complete(const std::string& uri_template, const CompletionRequest& request,
                               CallContext& context) override {
    if (!declares(*upstream_, "completions")) return Completion{};
    return completion_from(ask(
        *upstream_, "completion/complete",
        completion_params({{"type", "ref/resource"}, {"uri", uri_template}}, request), context));
  }

 private:
  std::shared_ptr<Upstream> upstream_;
};

class UpstreamPrompts final : public PromptProvider {
 public:
  explicit UpstreamPrompts(std::shared_ptr<Upstream> upstream)
      : upstream_(std::move(upstream)), prefix_(upstream_->spec().prefix) {}

  Outcome<std::vector<Prompt>> list_prompts(CallContext& context) override {
    if (!declares(*upstream_, "prompts")) return std::vector<Prompt>{};
    auto listed = ask_all(*upstream_, "prompts/list", "prompts", context);
    if (!listed.ok()) return listed.error();
    std::vector<Prompt> out;
    for (const json& item : listed.value()) {
      Prompt prompt;
      prompt.name = text_field(item, "name");
      if (prompt.name.empty()) continue;
      prompt.name = prefix_ + prompt.name;
      prompt.title = text_field(item, "title");
      prompt.description = text_field(item, "description");
      for (const json& argument : item.value("arguments", json::array())) {
        if (!argument.is_object() || text_field(argument, "name").empty()) continue;
        prompt.arguments.push_back({text_field(argument, "name"), text_field(argument, "title"),
                                    text_field(argument, "description"),
                                    argument.value("required", false)});
      }
      out.push_back(std::move(prompt));
    }
    return out;
  }

  Outcome<PromptResult> get_prompt(const std::string& name,
                                   const std::map<std::string, std::string>& arguments,
                                   CallContext& context) override {
    json params = {{"name", own_name(name)}};
    if (!arguments.empty()) params["arguments"] = arguments;
    Outcome<json> answer = ask(*upstream_, "prompts/get", std::move(params), context);
    if (!answer.ok()) return answer.error();
    PromptResult result;
    result.description = text_field(answer.value(), "description");
    for (const json& message : answer.value().value("messages", json::array())) {
      if (!message.is_object()) continue;
      result.messages.push_back({text_field(message, "role"), message.value("content", json())});
    }
    return result;
  }

  Outcome<Completion> complete(const std::string& name, const CompletionRequest& request,
                               CallContext& context) override {
    if (!declares(*upstream_, "completions")) return Completion{};
    return completion_from(ask(
        *upstream_, "completion/complete",
        completion_params({{"type", "ref/prompt"}, {"name", own_name(name)}}, request), context));
  }

 private:
  std::string own_name(const std::string& name) const {
    return name.rfind(prefix_, 0) == 0 ? name.substr(prefix_.size()) : name;
  }

  std::shared_ptr<Upstream> upstream_;
  const std::string prefix_;
};

}  // namespace

void UpstreamFeatures::notify(const std::string& method, const json& params) const {
  if (method == "notifications/resources/updated") {
    const std::string uri = params.is_object() ? text_field(params, "uri") : "";
    if (!uri.empty()) resources->events().resource_updated(uri);
  } else if (method == "notifications/resources/list_changed") {
    resources->events().resources_list_changed();
  } else if (method == "notifications/prompts/list_changed") {
    prompts->events().prompts_list_changed();
  }
}

UpstreamFeatures make_upstream_features(std::shared_ptr<Upstream> upstream) {
  UpstreamFeatures features;
  features.resources = std::make_shared<UpstreamResources>(upstream);
  features.prompts = std::make_shared<UpstreamPrompts>(std::move(upstream));
  return features;
}

}  // namespace toolmux
