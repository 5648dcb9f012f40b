#include "catalog/resource_provider.h"

#include <utility>

namespace toolmux {

namespace {
void put_optional(nlohmann::json& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}
}  // namespace

nlohmann::json Resource::to_json() const {
  nlohmann::json out{{"uri", uri}, {"name", name}};
  put_optional(out, "title", title);
  put_optional(out, "description", description);
  put_optional(out, "mimeType", mime_type);
  if (size) out["size"] = *size;
  if (!annotations.is_null()) out["annotations"] = annotations;
  return out;
}

nlohmann::json ResourceTemplate::to_json() const {
  nlohmann::json out{{"uriTemplate", uri_template}, {"name", name}};
  put_optional(out, "title", title);
  put_optional(out, "description", description);
  put_optional(out, "mimeType", mime_type);
  if (!annotations.is_null()) out["annotations"] = annotations;
  return out;
}

ResourceContents ResourceContents::text_of(std::string uri, std::string mime_type,
                                           std::string text) {
  ResourceContents c;
  c.uri = std::move(uri);
  c.mime_type = std::move(mime_type);
  c.text = std::move(text);
  return c;
}

ResourceContents ResourceContents::blob_of(std::string uri, std::string mime_type,
                                           std::string base64) {
  ResourceContents c;
  c.uri = std::move(uri);
  c.mime_type = std::move(mime_type);
  c.blob = std::move(base64);
  c.binary = true;
  return c;
}

nlohmann::json ResourceContents::to_json() const {
  nlohmann::json out{{"uri", uri}};
  put_optional(out, "mimeType", mime_type);
  if (binary) {
    out["blob"] = blob;
  } else {
    out["text"] = text;
  }
  return out;
}

Outcome<std::vector<ResourceTemplate>> ResourceProvider::list_resource_templates(CallContext&) {
  return std::vector<ResourceTemplate>{};
}

ProviderStatus ResourceProvider::subscribe(const std::string&, CallContext&) { return success(); }

void ResourceProvider::unsubscribe(const std::string&) {}

Outcome<Completion> ResourceProvider::complete(const std::string&, const CompletionRequest&,
                                               CallContext&) {
  return Completion{};
}

}  // namespace toolmux
