// read_tool_result: the built-in tool that reads an offloaded result back,
// page by page. Only the session that produced a result can read it.
#pragma once

#include <memory>

#include "catalog/tool_registry.h"
#include "src/base/problem.h"
#include "src/store/lazy_result_store.h"

namespace toolmux {

inline constexpr const char* kReadToolResult = "read_tool_result";
inline constexpr std::size_t kMaxPageChars = 20000;

// Registers read_tool_result. With a null store the tool is listed but every
// call answers that no results are stored (as `toolmux check` needs no store).
Problems register_result_tools(ToolRegistry& registry,
                               const std::shared_ptr<LazyResultStore>& store);

}  // namespace toolmux
