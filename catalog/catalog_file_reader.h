// The generic part of reading the catalog file: a JSON object's fields read
// with their types and ranges, every problem collected (never thrown) with
// the JSON pointer of where it is, unknown fields reported with the known
// name they most resemble ("did you mean"), and the file itself read with a
// bound on its size. The sections of the file (catalog_file_sections.h) are
// read with these.
//
// An ObjectReader refers to the object it reads and to the Problems it
// appends to; both must outlive it. Nothing here keeps state between calls,
// and nothing is safe to share between threads while it is used.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/personal_data.h"
#include "src/base/problem.h"

namespace toolmux::catalog_file {

using nlohmann::json;

// The largest catalog file read, and the largest file a "fromFile" names.
constexpr std::size_t kMaxFileBytes = 16u << 20;
constexpr std::size_t kMaxSecretFileBytes = 64u << 10;

// "a string", "an integer", ...: the type of `value`, for "expected X, got Y".
std::string type_name(const json& value);

// Reads the fields of one object (at pointer `base` in the file), appending a
// problem for each that is missing when required, of the wrong type or out of
// range, each at the field's pointer. A field reported so is marked, and
// nullopt (or null) is returned for it.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string base, Problems& problems)
      : object_(object), base_(std::move(base)), problems_(problems) {}

  std::string pointer(std::string_view field) const { return base_ + "/" + pointer_token(field); }

  // Reports every field not in `known`, suggesting a close known name.
  void reject_unknown(const std::vector<std::string_view>& known);

  // The field, or null (and a problem when it is required) when it is absent.
  const json* field(std::string_view name, bool required);

  // The field's value when it has the type the name says; nullopt when it is
  // absent or (a problem) of another type.
  std::optional<std::string> string(std::string_view name, bool required);
  std::optional<bool> boolean(std::string_view name);
  // An integer in [min, max] ("... must be between min and max, not N").
  std::optional<std::uint64_t> integer(std::string_view name, bool required, std::uint64_t min,
                                       std::uint64_t max);

  // An array of strings; a member that is not one is a problem at its index.
  std::optional<std::vector<std::string>> strings(std::string_view name, bool required);
  const json* object(std::string_view name, bool required);

  // Appends a problem of the section's own (a value out of its set, say).
  void add(std::string pointer_text, std::string message);

  // For an optional object field whose members are objects (keyed by names):
  // calls read(key, member, member's pointer) for each; a member that is not
  // an object is a problem ("expected an object (<what>), got ...").
  template <typename Read>
  void object_members(std::string_view name, std::string_view what, Read read) {
    const json* members = object(name, false);
    if (!members) return;
    for (const auto& [key, member] : members->items()) {
      std::string at = pointer(name) + "/" + pointer_token(key);
      if (!member.is_object()) {
        add(at, "expected an object (" + std::string(what) + "), got " + type_name(member));
        continue;
      }
      read(key, member, at);
    }
  }

  // Fields already reported on, relative to the object ("/name").
  const std::set<std::string>& reported() const { return reported_; }
  void mark(std::string_view name) { reported_.insert("/" + pointer_token(name)); }

 private:
  void wrong_type(std::string_view name, std::string_view expected, const json& value);

  const json& object_;
  std::string base_;
  Problems& problems_;
  std::set<std::string> reported_;
};

// The field `name` of `reader`'s object ("redactPersonalData"): an array of
// the names of personal data classes (src/base/personal_data.h), as a set.
// A name that is none is a problem at its index that lists the classes (and
// suggests the closest); nullopt when the field is absent or has a problem.
std::optional<PersonalDataClasses> read_personal_data_classes(ObjectReader& reader,
                                                              std::string_view name);

// `found` without the problems at or under a pointer in `reported`: those
// fields were already reported as missing or of the wrong type.
Problems without_reported(Problems found, const std::set<std::string>& reported);

// The whole file, or nullopt with one problem (at "") naming the path and why:
// it cannot be opened or read, is not a regular file (a directory, a FIFO: a
// FIFO is never waited on), or is over `max_bytes` (read_regular_file,
// src/base/file_io.h).
std::optional<std::string> read_file(const std::filesystem::path& path, Problems& problems,
                                     std::size_t max_bytes = kMaxFileBytes);

}  // namespace toolmux::catalog_file
