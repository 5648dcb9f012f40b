// What a program that embeds toolmux adds to the catalog: tools, resources and
// prompts implemented in C++ (src/app/toolmux.h runs toolmux with them). Plain
// data; the handlers and providers are called from many threads at once.
#pragma once

#include <memory>
#include <vector>

#include "catalog/prompt_provider.h"
#include "catalog/resource_provider.h"
#include "catalog/tool.h"

namespace toolmux {

// A tool implemented in C++ by a program that embeds toolmux (src/app/toolmux.h).
struct NativeTool {
  ToolSpec spec;
  ToolHandler handler;
};

// Resources and prompts implemented in C++ by a program that embeds toolmux,
// in the order they are asked (catalog/provider_router.h).
struct NativeProviders {
  std::vector<std::shared_ptr<ResourceProvider>> resources;
  std::vector<std::shared_ptr<PromptProvider>> prompts;
};

}  // namespace toolmux
