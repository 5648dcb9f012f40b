#include "src/builtins/result_tools.h"

#include <string>

#include "catalog/tool.h"

namespace toolmux {
namespace {

using nlohmann::json;

json input_schema() {
  return {{"type", "object"},
          {"properties",
           {{"result_id",
             {{"type", "string"},
              {"minLength", 1},
              {"maxLength", 256},
              {"description", "The result id a previous tool result gave, exactly as given."}}},
            {"offset",
             {{"type", "integer"},
              {"minimum", 0},
              {"default", 0},
              {"description",
               "Where to start, in Unicode characters from the beginning. "
               "Use the next_offset of the previous page."}}},
            {"max_chars",
             {{"type", "integer"},
              {"minimum", 1},
              {"maximum", static_cast<int>(kMaxPageChars)},
              {"default", static_cast<int>(kMaxPageChars)},
              {"description", "At most this many characters (up to 20000)."}}}}},
          {"required", {"result_id"}},
          {"additionalProperties", false}};
}

json output_schema() {
  return {{"type", "object"},
          {"properties",
           {{"result_id", {{"type", "string"}}},
            {"offset", {{"type", "integer"}}},
            {"returned_chars", {{"type", "integer"}}},
            {"total_chars", {{"type", "integer"}}},
            {"next_offset", {{"type", "integer"}}}}},
          {"required", {"result_id", "offset", "returned_chars", "total_chars"}},
          {"additionalProperties", false}};
}

ToolResult read_page(LazyResultStore* results, const json& args, CallContext& context) {
  const std::string id = args["result_id"].get<std::string>();
  const auto offset = args.value("offset", std::uint64_t{0});
  const auto max_chars = args.value("max_chars", kMaxPageChars);
  const std::string not_found = "No stored result with id " + json(id).dump() +
                                " for this session: it may have expired or been deleted.";
  if (!results || context.session_id().empty()) return ToolResult::error(not_found);
  const Result<ResultStore*> store = results->get();
  if (!store.ok())
    return ToolResult::error("The result store is not available: " + store.message());

  auto page = (*store)->read(context.session_id(), id, offset, max_chars);
  if (!page.ok()) {
    if (page.status().is_out_of_range()) {
      return ToolResult::error("offset " + std::to_string(offset) +
                               " is past the end of the result");
    }
    // A shared store that cannot be reached (or failed) is not an unknown id.
    if (page.status().is_unavailable() || page.status().is_io_error()) {
      return ToolResult::error("The result store is not available: " + page.message());
    }
    return ToolResult::error(not_found);
  }
  const std::uint64_t returned =
      page->next_offset ? *page->next_offset - page->offset : page->total_chars - page->offset;
  std::string trailer = "[toolmux: characters " + std::to_string(page->offset) + " to " +
                        std::to_string(page->offset + returned) + " of " +
                        std::to_string(page->total_chars) + "; ";
  trailer += page->next_offset ? "continue with offset " + std::to_string(*page->next_offset) + "]"
                               : "this is the end]";
  ToolResult result;
  // The page alone in the first block, so that joining the first blocks of
  // every page gives back the result exactly; the position in a second block.
  result.content.push_back({{"type", "text"}, {"text", std::move(page->text)}});
  result.content.push_back({{"type", "text"}, {"text", std::move(trailer)}});
  result.structured_content = {{"result_id", id},
                               {"offset", page->offset},
                               {"returned_chars", returned},
                               {"total_chars", page->total_chars}};
  if (page->next_offset) result.structured_content["next_offset"] = *page->next_offset;
  return result;
}

}  // namespace

Problems register_result_tools(ToolRegistry& registry,
                               const std::shared_ptr<LazyResultStore>& store) {
  ToolSpec spec;
  spec.name = kReadToolResult;
  spec.title = "Read a stored tool result";
  spec.description =
      "Read a large tool result that was stored instead of shown, page by page. A result too "
      "large to return is replaced by a preview and a result_id; pass that id here with "
      "offset 0, then the next_offset each page gives, until a page says it is the end. Each "
      "page holds at most 20000 characters; offsets count Unicode characters. Only the "
      "session that produced a result can read it, and results expire.";
  spec.input_schema = input_schema();
  spec.output_schema = output_schema();
  spec.side_effect = "read_only";
  spec.timeout = std::chrono::milliseconds(10000);
  spec.returns_by_deadline = true;  // one read of the result store
  spec.runs_on_reader = false;      // which may be PostgreSQL, across a network
  spec.tags = {"results"};
  spec.schemas_vetted = true;  // toolmux's own: compiled at first use (tool.h)
  return registry.add(std::move(spec), [store](const json& args, CallContext& context) {
    return read_page(store.get(), args, context);
  });
}

}  // namespace toolmux
