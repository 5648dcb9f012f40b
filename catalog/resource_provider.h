// Resources (MCP server feature "resources"): what a resource provider offers
// and the interface it implements. A program that embeds toolmux adds its own
// providers (src/app/toolmux.h), toolmux serves offloaded results through one
// (src/builtins/result_resources.h), and an upstream MCP server's resources come
// through one too.
//
// The server calls a provider from several threads at once, off the session's
// reader thread, with the CallContext of the request it serves: who asks
// (session_id(), principal()), until when (deadline()), and whether the client
// gave up (cancelled()). A method that waits on something slow checks them.
// Methods never throw to report a failure: they return a ProviderError
// (provider_outcome.h). An exception that escapes anyway is answered as an
// internal error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/completion.h"
#include "catalog/provider_events.h"
#include "catalog/provider_outcome.h"
#include "catalog/tool.h"

namespace toolmux {

// One entry of resources/list.
struct Resource {
  std::string uri;                    // required; what resources/read takes
  std::string name;                   // required
  std::string title;                  // optional; "" = none
  std::string description;            // optional
  std::string mime_type;              // optional
  std::optional<std::uint64_t> size;  // in bytes, when known
  nlohmann::json annotations;         // null = none; sent as given
  nlohmann::json to_json() const;
};

// One entry of resources/templates/list: resources read by filling in an
// RFC 6570 URI template (catalog/uri_template.h says which forms are matched).
struct ResourceTemplate {
  std::string uri_template;  // required, e.g. "test://template/{id}/data"
  std::string name;          // required
  std::string title;
  std::string description;
  std::string mime_type;
  nlohmann::json annotations;
  nlohmann::json to_json() const;
};

// One element of a resources/read result: text or binary (base64).
struct ResourceContents {
  std::string uri;
  std::string mime_type;  // "" = none
  std::string text;       // when !binary
  std::string blob;       // base64, when binary
  bool binary = false;

  static ResourceContents text_of(std::string uri, std::string mime_type, std::string text);
  static ResourceContents blob_of(std::string uri, std::string mime_type, std::string base64);
  nlohmann::json to_json() const;
};

class ResourceProvider {
 public:
  virtual ~ResourceProvider() = default;

  // Every resource this provider offers the caller. A URI it lists is routed
  // to it (the first provider listing a URI wins).
  virtual Outcome<std::vector<Resource>> list_resources(CallContext& context) = 0;
  // Its URI templates (none by default). A URI that matches one is routed to it.
  virtual Outcome<std::vector<ResourceTemplate>> list_resource_templates(CallContext& context);
  // The contents of `uri`. ProviderError::resource_not_found(uri) when it has
  // no such resource (for this caller): the router then asks the next provider.
  virtual Outcome<std::vector<ResourceContents>> read_resource(const std::string& uri,
                                                               CallContext& context) = 0;
  // A session subscribes to `uri` (a resource of this provider; called for
  // each subscribing session, so the provider may check the caller): from now
  // on the provider reports its changes with events().resource_updated. By
  // default there is nothing to set up. An error refuses the subscription.
  virtual ProviderStatus subscribe(const std::string& uri, CallContext& context);
  // The last subscriber of `uri` left (unsubscribed or ended).
  virtual void unsubscribe(const std::string& uri);
  // completion/complete for `request.argument`, a variable of `uri_template`
  // (one of its templates). No suggestions by default.
  virtual Outcome<Completion> complete(const std::string& uri_template,
                                       const CompletionRequest& request, CallContext& context);

  // Where this provider reports changes; the server connects it.
  ProviderEvents& events() { return events_; }

 private:
  ProviderEvents events_;
};

}  // namespace toolmux
