// JSON Schemas compiled once, at registration, and checked many times.
//
// Compilation refuses a schema that the validator could not fully enforce or
// that is not self-contained; see "JSON Schema support" in docs/tool-contract.md
// for the exact keyword list. Nothing is ever read or fetched: a $ref, $id or
// $schema naming a file or a URL is a problem, not a download.
// A CompiledSchema is immutable and safe to validate from many threads at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/problem.h"

namespace toolmux {

class CompiledSchema {
 public:
  // Returns the compiled schema, or null with one or more problems appended to
  // `problems` (pointers relative to the schema's root).
  static std::shared_ptr<const CompiledSchema> compile(const nlohmann::json& schema,
                                                       Problems& problems);

  // One message per violation, each naming where and which rule, e.g.
  // "/count: expected integer, got string" or "/: missing required property \"path\"".
  // Empty when `value` conforms.
  std::vector<std::string> validate(const nlohmann::json& value) const;

  const nlohmann::json& source() const;

  ~CompiledSchema();
  CompiledSchema(const CompiledSchema&) = delete;
  CompiledSchema& operator=(const CompiledSchema&) = delete;

  struct Impl;

 private:
  explicit CompiledSchema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace toolmux
