// `toolmux import` on any bytes: a client configuration
// (src/app/client_config_import.h), with and without a named format.
//
// Invariants: it never throws; jsonc_to_json keeps the text's length and its
// newlines; a result with problems holds nothing else; without problems,
// every upstream has a name the catalog allows and every env and headers
// value in it is a {"fromEnv": NAME} reference (no value of the input is
// copied in the clear), bearerToken too, and the catalog can be written as
// JSON text.
#include <algorithm>
#include <optional>
#include <string>

#include "src/app/client_config_import.h"
#include "src/base/untrusted_json.h"
#include "tests/fuzz/fuzz_check.h"

using nlohmann::json;
using toolmux::ClientConfigImport;
using toolmux::ClientFormat;

namespace {

bool name_allowed(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

bool is_reference(const json& value) {
  return value.is_object() && value.size() == 1 && value.contains("fromEnv") &&
         value["fromEnv"].is_string() && !value["fromEnv"].get<std::string>().empty();
}

void check(const ClientConfigImport& imported) {
  if (!imported.problems.empty()) {
    FUZZ_CHECK(
        imported.upstreams.empty() && imported.imported.empty() && imported.variables.empty(),
        "a result with problems holds nothing else");
    return;
  }
  FUZZ_CHECK(imported.upstreams.is_object(), "upstreams is an object");
  FUZZ_CHECK(imported.upstreams.size() == imported.imported.size(),
             "one upstream per server imported");
  for (const auto& [name, upstream] : imported.upstreams.items()) {
    FUZZ_CHECK(name_allowed(name), "an upstream name the catalog allows");
    for (const char* section : {"env", "headers"}) {
      if (!upstream.contains(section)) continue;
      for (const auto& [key, value] : upstream[section].items()) {
        FUZZ_CHECK(is_reference(value), "env and headers values are references");
      }
    }
    if (upstream.contains("bearerToken")) {
      FUZZ_CHECK(is_reference(upstream["bearerToken"]), "bearerToken is a reference");
    }
  }
  const auto catalog = toolmux::imported_catalog(imported, "catalog.schema.json");
  FUZZ_CHECK(!toolmux::unserializable_json(json::parse(catalog.dump())),
             "the catalog can be written as JSON");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = toolmux::fuzz::as_text(data, size);
  const std::string plain = toolmux::jsonc_to_json(text);
  FUZZ_CHECK(plain.size() == text.size(), "jsonc_to_json keeps the length");
  FUZZ_CHECK(
      std::count(plain.begin(), plain.end(), '\n') == std::count(text.begin(), text.end(), '\n'),
      "jsonc_to_json keeps the newlines");
  check(toolmux::import_client_config(text));
  check(toolmux::import_client_config(text, ClientFormat::cursor));
  return 0;
}
