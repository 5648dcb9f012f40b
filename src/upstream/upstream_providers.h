// An upstream MCP server's resources, resource templates, prompts and
// completions, served by toolmux as providers (catalog/resource_provider.h,
// catalog/prompt_provider.h): each request is relayed to the upstream through
// its Upstream (src/upstream/upstream.h: fail-fast while it is down, the breaker), and
// its answer or its JSON-RPC error comes back as it was.
//
// Names: a prompt is published under the upstream's prefix (its tools' prefix)
// and relayed under its own name; resource URIs are left as they are (a URI
// names the resource wherever it is listed), as are URI templates.
//
// Only what the upstream declared in its initialize capabilities is asked
// for; an upstream that is not serving lists nothing. notify() takes the
// upstream's notifications/resources/updated and .../list_changed and reports
// them through the providers' events().
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "catalog/prompt_provider.h"
#include "catalog/resource_provider.h"
#include "src/upstream/upstream.h"

namespace toolmux {

struct UpstreamFeatures {
  std::shared_ptr<ResourceProvider> resources;
  std::shared_ptr<PromptProvider> prompts;
  // An upstream notification (resources/updated, resources/list_changed,
  // prompts/list_changed): reported through the providers' events.
  void notify(const std::string& method, const nlohmann::json& params) const;
};

UpstreamFeatures make_upstream_features(std::shared_ptr<Upstream> upstream);

}  // namespace toolmux
