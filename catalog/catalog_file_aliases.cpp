#include "catalog/catalog_file_sections.h"

#include "catalog/catalog_file_reader.h"

namespace toolmux::catalog_file {

namespace {

const std::vector<std::string_view> kAliasesFields = {"$comment", "tools", "arguments"};

}  // namespace

// "aliases": only the shape; check_aliases checks the names at registration.
AliasTable read_aliases(const json& value, Problems& problems) {
  AliasTable aliases;
  ObjectReader reader(value, "/aliases", problems);
  reader.reject_unknown(kAliasesFields);
  reader.string("$comment", false);
  if (const json* tools = reader.object("tools", false)) {
    for (const auto& [alias, target] : tools->items()) {
      if (!target.is_string()) {
        reader.add(reader.pointer("tools") + "/" + pointer_token(alias),
                   "expected a string (a tool name), got " + type_name(target));
        continue;
      }
      aliases.tools[alias] = target.get<std::string>();
    }
  }
  reader.object_members(
      "arguments", "argument alias: argument name",
      [&](const std::string& tool, const json& table, const std::string& tool_at) {
        auto& renames = aliases.arguments[tool];
        for (const auto& [alias, canonical] : table.items()) {
          if (!canonical.is_string()) {
            reader.add(tool_at + "/" + pointer_token(alias),
                       "expected a string (an argument name), got " + type_name(canonical));
            continue;
          }
          renames[alias] = canonical.get<std::string>();
        }
      });
  return aliases;
}

}  // namespace toolmux::catalog_file
