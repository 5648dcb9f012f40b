// Offloaded tool results as resources of the session that produced them.
//
// URI scheme: toolmux://results/<result_id>, where <result_id> is the id the
// offload notice gives (43 characters of base64url, so the URI needs no
// escaping). resources/list shows a session its own stored results, oldest
// first; resources/read gives one whole, with the MIME type it was stored with
// (text/plain for text; a stored image or blob comes back as a blob of its
// own type, a stored run of content blocks as application/json); the resource template
// toolmux://results/{id} routes every such URI here, and completes ids. A
// result of another session, an expired one and an unknown id are all
// "Resource not found", so ids cannot be probed. Results are never updated:
// subscribing to one is accepted and never notified.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "catalog/resource_provider.h"
#include "src/store/lazy_result_store.h"

namespace toolmux {

inline constexpr std::string_view kResultUriPrefix = "toolmux://results/";
// resources/read returns a result whole only up to this size; larger ones are
// read page by page with read_tool_result.
inline constexpr std::uint64_t kMaxResultResourceBytes = std::uint64_t{8} << 20;

// `store` may be null (nothing is ever offloaded): then no session has results.
std::shared_ptr<ResourceProvider> make_result_resources(std::shared_ptr<LazyResultStore> store);

}  // namespace toolmux
