#include "catalog/catalog_file.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <system_error>
#include <utility>

#include "catalog/catalog_file_reader.h"
#include "catalog/catalog_file_sections.h"
#include "src/base/untrusted_json.h"

namespace toolmux {

using catalog_file::ObjectReader;
using catalog_file::read_aliases;
using catalog_file::read_discovery;
using catalog_file::read_file;
using catalog_file::read_policy;
using catalog_file::read_results;
using catalog_file::read_search;
using catalog_file::read_search_learn;
using catalog_file::read_search_rerank;
using catalog_file::read_tool;
using catalog_file::read_upstreams;
using catalog_file::type_name;

namespace {

namespace fs = std::filesystem;

const std::vector<std::string_view> kTopFields = {
    "$schema",   "$comment", "tools",     "aliases",       "policy", "results",
    "discovery", "search",   "upstreams", "authorization", "skills"};

// The index N of a pointer "/tools/N/...", or -1 for anything else.
long tool_index(std::string_view pointer) {
  constexpr std::string_view prefix = "/tools/";
  if (pointer.rfind(prefix, 0) != 0) return -1;
  long index = 0;
  std::size_t i = prefix.size();
  if (i >= pointer.size()) return -1;
  for (; i < pointer.size() && pointer[i] != '/'; ++i) {
    if (pointer[i] < '0' || pointer[i] > '9') return -1;
    index = index * 10 + (pointer[i] - '0');
    if (index > 1000000000) return -1;
  }
  return index;
}

// Where a problem goes in the report: the whole document first, then the
// tools (by index), then aliases, policy and results.
std::pair<int, long> problem_order(std::string_view pointer) {
  auto under = [&](std::string_view section) {
    return pointer == section ||
           (pointer.rfind(section, 0) == 0 && pointer.size() > section.size() &&
            pointer[section.size()] == '/');
  };
  if (under("/tools")) return {1, tool_index(pointer)};
  if (under("/aliases")) return {2, 0};
  if (under("/policy")) return {3, 0};
  if (under("/results")) return {4, 0};
  if (under("/discovery")) return {5, 0};
  if (under("/search")) return {6, 0};
  if (under("/upstreams")) return {7, 0};
  if (under("/authorization")) return {8, 0};
  if (under("/skills")) return {9, 0};
  return {0, 0};
}

}  // namespace

CatalogLoad load_catalog_file(const std::filesystem::path& path) {
  CatalogLoad load;
  Problems& problems = load.problems;
  auto text = read_file(path, problems);
  if (!text) return load;

  ParsedJson parsed = parse_untrusted_json(*text);
  if (parsed.syntax_error) {
    problems.push_back({"", *parsed.syntax_error});
    return load;
  }
  for (const auto& violation : parsed.violations) {
    problems.push_back({violation.pointer, violation.message});
  }
  const json& root = parsed.value;
  if (!root.is_object()) {
    problems.push_back({"", "expected an object with a \"tools\" array, got " + type_name(root)});
    return load;
  }

  std::error_code ec;
  fs::path folder = fs::absolute(path, ec).parent_path();

  ObjectReader top(root, "", problems);
  top.reject_unknown(kTopFields);
  top.string("$schema", false);
  top.string("$comment", false);
  if (const json* tools = top.field("tools", true)) {
    if (!tools->is_array()) {
      problems.push_back({"/tools", "expected an array, got " + type_name(*tools)});
    } else {
      std::map<std::string, std::size_t> first_use;
      for (std::size_t i = 0; i < tools->size(); ++i) {
        std::string base = "/tools/" + std::to_string(i);
        const json& item = (*tools)[i];
        if (!item.is_object()) {
          problems.push_back({base, "expected an object (a tool), got " + type_name(item)});
          continue;
        }
        auto tool = read_tool(item, base, folder, problems);
        auto name_it = item.find("name");
        if (name_it != item.end() && name_it->is_string()) {
          std::string name = name_it->get<std::string>();
          auto [it, fresh] = first_use.emplace(name, i);
          if (!fresh) {
            problems.push_back({base + "/name", "tool \"" + name +
                                                    "\": the name is already used by /tools/" +
                                                    std::to_string(it->second)});
            continue;
          }
        }
        if (tool) load.catalog.command_tools.push_back(std::move(*tool));
      }
    }
  }

  if (const json* aliases = top.object("aliases", false)) {
    load.catalog.aliases = read_aliases(*aliases, problems);
  }
  if (const json* policy = top.object("policy", false)) {
    load.catalog.policy = read_policy(*policy, problems);
  }
  if (const json* results = top.object("results", false)) {
    load.catalog.results = read_results(*results, problems);
  }
  if (const json* discovery = top.object("discovery", false)) {
    load.catalog.discovery = read_discovery(*discovery, problems);
  }
  if (const json* search = top.object("search", false)) {
    load.catalog.search = read_search(*search, problems);
    load.catalog.search_learn = read_search_learn(*search, problems);
    load.catalog.search_rerank = read_search_rerank(*search, problems);
  }
  if (const json* upstreams = top.object("upstreams", false)) {
    load.catalog.upstreams = read_upstreams(*upstreams, folder, problems);
  }
  if (const json* authorization = top.object("authorization", false)) {
    load.catalog.authorization = catalog_file::read_authorization(*authorization, problems);
  }
  if (const json* skills = top.field("skills", false)) {
    // Folders of skills (catalog/skills.h), read when the catalog is built.
    if (!skills->is_array()) {
      problems.push_back({"/skills", "expected an array of folders, got " + type_name(*skills)});
    } else {
      for (std::size_t i = 0; i < skills->size(); ++i) {
        const json& item = (*skills)[i];
        if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
          problems.push_back({"/skills/" + std::to_string(i),
                              "expected a folder (a non-empty string), got " + type_name(item)});
          continue;
        }
        load.catalog.skills.push_back(folder / item.get<std::string>());
      }
    }
  }

  // Whole-document problems first, then tool by tool, then the other sections;
  // the order they were found in within each.
  std::stable_sort(problems.begin(), problems.end(), [](const Problem& a, const Problem& b) {
    return problem_order(a.pointer) < problem_order(b.pointer);
  });
  if (!problems.empty()) load.catalog = CatalogFile{};
  return load;
}

}  // namespace toolmux
