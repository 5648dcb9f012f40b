#include "catalog/catalog_file_reader.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "src/base/edit_distance.h"
#include "src/base/file_io.h"

namespace toolmux::catalog_file {

namespace fs = std::filesystem;

std::string type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "something else";
  }
}

void ObjectReader::reject_unknown(const std::vector<std::string_view>& known) {
  for (const auto& [key, value] : object_.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string message = "unknown field \"" + key + "\"";
    const std::vector<std::size_t> best = closest_names(known, key, 1);
    if (!best.empty()) message += " (did you mean \"" + std::string(known[best[0]]) + "\"?)";
    add(pointer(key), std::move(message));
  }
}

const json* ObjectReader::field(std::string_view name, bool required) {
  auto it = object_.find(name);
  if (it == object_.end()) {
    if (required) {
      add(base_, "missing required field \"" + std::string(name) + "\"");
      mark(name);
    }
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> ObjectReader::string(std::string_view name, bool required) {
  const json* value = field(name, required);
  if (!value) return std::nullopt;
  if (!value->is_string()) return wrong_type(name, "a string", *value), std::nullopt;
  return value->get<std::string>();
}

std::optional<bool> ObjectReader::boolean(std::string_view name) {
  const json* value = field(name, false);
  if (!value) return std::nullopt;
  if (!value->is_boolean()) return wrong_type(name, "a boolean", *value), std::nullopt;
  return value->get<bool>();
}

std::optional<std::uint64_t> ObjectReader::integer(std::string_view name, bool required,
                                                   std::uint64_t min, std::uint64_t max) {
  const json* value = field(name, required);
  if (!value) return std::nullopt;
  if (!value->is_number_integer()) {
    return wrong_type(name, "an integer", *value), std::nullopt;
  }
  bool negative =
      value->is_number_integer() && !value->is_number_unsigned() && value->get<std::int64_t>() < 0;
  std::uint64_t number = negative ? 0 : value->get<std::uint64_t>();
  if (negative || number < min || number > max) {
    add(pointer(name),
        std::string(name) +
            (max == std::numeric_limits<std::uint64_t>::max()
                 ? " must be at least " + std::to_string(min)
                 : " must be between " + std::to_string(min) + " and " + std::to_string(max)) +
            ", not " + value->dump());
    mark(name);
    return std::nullopt;
  }
  return number;
}

std::optional<std::vector<std::string>> ObjectReader::strings(std::string_view name,
                                                              bool required) {
  const json* value = field(name, required);
  if (!value) return std::nullopt;
  if (!value->is_array()) return wrong_type(name, "an array of strings", *value), std::nullopt;
  std::vector<std::string> out;
  bool ok = true;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const json& item = (*value)[i];
    if (!item.is_string()) {
      add(pointer(name) + "/" + std::to_string(i), "expected a string, got " + type_name(item));
      ok = false;
      continue;
    }
    out.push_back(item.get<std::string>());
  }
  if (!ok) {
    mark(name);
    return std::nullopt;
  }
  return out;
}

const json* ObjectReader::object(std::string_view name, bool required) {
  const json* value = field(name, required);
  if (!value) return nullptr;
  if (!value->is_object()) return wrong_type(name, "an object", *value), nullptr;
  return value;
}

void ObjectReader::add(std::string pointer_text, std::string message) {
  problems_.push_back({std::move(pointer_text), std::move(message)});
}

void ObjectReader::wrong_type(std::string_view name, std::string_view expected, const json& value) {
  add(pointer(name), "expected " + std::string(expected) + ", got " + type_name(value));
  mark(name);
}

std::optional<PersonalDataClasses> read_personal_data_classes(ObjectReader& reader,
                                                              std::string_view name) {
  std::optional<std::vector<std::string>> names = reader.strings(name, false);
  if (!names) return std::nullopt;
  const std::vector<std::string_view>& known = personal_data_names();
  PersonalDataClasses classes;
  bool ok = true;
  for (std::size_t i = 0; i < names->size(); ++i) {
    const std::string& given = (*names)[i];
    if (auto kind = personal_data_from_name(given)) {
      classes.insert(*kind);
      continue;
    }
    std::string message = "unknown personal data class " + json(given).dump();
    const std::vector<std::size_t> best = closest_names(known, given, 1);
    if (!best.empty()) message += " (did you mean \"" + std::string(known[best[0]]) + "\"?)";
    message += "; the classes are";
    for (std::size_t k = 0; k < known.size(); ++k) {
      message += (k == 0 ? " " : k + 1 == known.size() ? " and " : ", ") + std::string(known[k]);
    }
    reader.add(reader.pointer(name) + "/" + std::to_string(i), std::move(message));
    ok = false;
  }
  if (!ok) {
    reader.mark(name);
    return std::nullopt;
  }
  return classes;
}

// `found` without the problems at or under a pointer in `reported`: those
// fields were already reported as missing or of the wrong type.
Problems without_reported(Problems found, const std::set<std::string>& reported) {
  Problems kept;
  for (auto& problem : found) {
    bool covered = false;
    for (const auto& pointer : reported) {
      if (problem.pointer == pointer || problem.pointer.rfind(pointer + "/", 0) == 0) {
        covered = true;
        break;
      }
    }
    if (!covered) kept.push_back(std::move(problem));
  }
  return kept;
}

std::optional<std::string> read_file(const fs::path& path, Problems& problems,
                                     std::size_t max_bytes) {
  Result<std::string> text = read_regular_file(path, max_bytes);
  if (!text.ok()) {
    problems.push_back({"", text.message()});
    return std::nullopt;
  }
  return std::move(*text);
}

}  // namespace toolmux::catalog_file
