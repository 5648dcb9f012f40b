#include "src/builtins/result_resources.h"

#include <chrono>
#include <ctime>
#include <utility>
#include <vector>

namespace toolmux {
namespace {

constexpr const char* kTemplate = "toolmux://results/{id}";

std::string utc_time(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return out;
}

class ResultResources final : public ResourceProvider {
 public:
  explicit ResultResources(std::shared_ptr<LazyResultStore> store) : store_(std::move(store)) {}

  Outcome<std::vector<Resource>> list_resources(CallContext& context) override {
    std::vector<Resource> out;
    // A store that was never opened holds nothing of this process's sessions.
    ResultStore* store = store_ ? store_->if_open() : nullptr;
    if (!store || context.session_id().empty()) return out;
    for (const StoredResult& r : store->list(context.session_id())) {
      Resource resource;
      resource.uri = std::string(kResultUriPrefix) + r.id;
      resource.name = "result-" + r.id;
      resource.title = "Stored tool result";
      resource.description = "A tool result too large to return, stored at " + utc_time(r.created) +
                             ": " + std::to_string(r.chars) + " characters" +
                             (r.format.base64 ? " of base64." : ".");
      resource.mime_type = r.format.mime_type;
      resource.size = r.bytes;
      out.push_back(std::move(resource));
    }
    return out;
  }

  Outcome<std::vector<ResourceTemplate>> list_resource_templates(CallContext&) override {
    ResourceTemplate t;
    t.uri_template = kTemplate;
    t.name = "stored-tool-result";
    t.title = "Stored tool result";
    t.description =
        "A tool result of this session that was too large to return, by the result_id its "
        "notice gave. Only the session that produced a result can read it; results expire.";
    t.mime_type = "text/plain";
    return std::vector<ResourceTemplate>{std::move(t)};
  }

  Outcome<std::vector<ResourceContents>> read_resource(const std::string& uri,
                                                       CallContext& context) override {
    auto found = find(uri, context);
    if (!found.ok()) return found.error();
    if (found.value().bytes > kMaxResultResourceBytes) {
      return ProviderError::unavailable(
          "Stored result " + found.value().id + " is " + std::to_string(found.value().bytes) +
          " bytes, more than the " + std::to_string(kMaxResultResourceBytes) +
          " resources/read returns at once: read it page by page with read_tool_result");
    }
    const Result<ResultStore*> store = store_->get();
    if (!store.ok()) {
      return ProviderError::unavailable("The result store is not available: " + store.message());
    }
    auto page = (*store)->read(context.session_id(), found.value().id, 0,
                               static_cast<std::size_t>(found.value().chars));
    // Expired or deleted since it was found.
    if (!page.ok()) return ProviderError::resource_not_found(uri);
    const StoredFormat& format = found.value().format;
    return std::vector<ResourceContents>{
        format.base64 ? ResourceContents::blob_of(uri, format.mime_type, std::move(page->text))
                      : ResourceContents::text_of(uri, format.mime_type, std::move(page->text))};
  }

  ProviderStatus subscribe(const std::string& uri, CallContext& context) override {
    auto found = find(uri, context);
    if (!found.ok()) return found.error();
    return success();
  }

  Outcome<Completion> complete(const std::string&, const CompletionRequest& request,
                               CallContext& context) override {
    std::vector<std::string> ids;
    ResultStore* store = store_ ? store_->if_open() : nullptr;
    if (store && !context.session_id().empty()) {
      for (const StoredResult& r : store->list(context.session_id())) ids.push_back(r.id);
    }
    return complete_from(ids, request.value);
  }

 private:
  // The caller's stored result that `uri` names; not found for anything else.
  Outcome<StoredResult> find(const std::string& uri, CallContext& context) const {
    if (uri.compare(0, kResultUriPrefix.size(), kResultUriPrefix) != 0) {
      return ProviderError::resource_not_found(uri);
    }
    const std::string id = uri.substr(kResultUriPrefix.size());
    ResultStore* store = store_ ? store_->if_open() : nullptr;
    if (store && !context.session_id().empty()) {
      for (StoredResult& r : store->list(context.session_id())) {
        if (r.id == id) return std::move(r);
      }
    }
    return ProviderError::resource_not_found(uri);
  }

  std::shared_ptr<LazyResultStore> store_;
};

}  // namespace

std::shared_ptr<ResourceProvider> make_result_resources(std::shared_ptr<LazyResultStore> store) {
  return std::make_shared<ResultResources>(std::move(store));
}

}  // namespace toolmux
