// toolmux as a library. A program registers native tools — C++ handlers whose
// CallContext reports progress, sends log messages and asks the client
// (elicitation, sampling) — and runs toolmux's own command line with them:
// `serve` over stdio or Streamable HTTP, through the same call pipeline,
// limits and records as every other tool. It may also add resources, resource
// templates, prompts and completions (NativeProviders). examples/conformance-server is one.
//
//   int main(int argc, char** argv) {
//     std::vector<toolmux::NativeTool> tools = {...};
//     return toolmux::run_toolmux({argv + 1, argv + argc}, std::move(tools));
//   }
#pragma once

#include <string>
#include <vector>

#include "catalog/tool.h"
#include "src/assembly/native.h"

namespace toolmux {

// Runs the toolmux command line (`args` without the program name) with
// `native_tools` added to the catalog, and `native_providers`' resources,
// resource templates, prompts and completions served beside the offloaded
// results (catalog/resource_provider.h, catalog/prompt_provider.h); returns
// the exit code.
int run_toolmux(const std::vector<std::string>& args, const std::vector<NativeTool>& native_tools,
                const NativeProviders& native_providers = {});

}  // namespace toolmux
