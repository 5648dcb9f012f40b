#include "catalog/catalog_file_sections.h"

#include "catalog/catalog_file_reader.h"

namespace toolmux::catalog_file {

namespace {

const std::vector<std::string_view> kAuthorizationFields = {"$comment", "issuers", "resource",
                                                            "scopes", "introspectionClient"};
const std::vector<std::string_view> kScopeFields = {"$comment", "scope", "allows"};
constexpr std::size_t kMaxIssuers = 16;
constexpr std::size_t kMaxScopes = 64;

}  // namespace

// "authorization": the issuers whose tokens count, the resource URL they must
// name, and the scopes, in order, with the side-effect classes each allows.
// Only the shape is checked here; serve checks the URLs when it starts.
AuthorizationSettings read_authorization(const json& value, Problems& problems) {
  AuthorizationSettings settings;
  ObjectReader reader(value, "/authorization", problems);
  reader.reject_unknown(kAuthorizationFields);
  reader.string("$comment", false);
  if (auto issuers = reader.strings("issuers", false)) {
    if (issuers->size() > kMaxIssuers) {
      reader.add(reader.pointer("issuers"), "at most " + std::to_string(kMaxIssuers) +
                                                " issuers, not " + std::to_string(issuers->size()));
    } else {
      settings.issuers = std::move(*issuers);
    }
  }
  if (auto resource = reader.string("resource", false)) settings.resource = std::move(*resource);
  if (auto client = reader.string("introspectionClient", false)) {
    settings.introspection_client = std::move(*client);
  }
  const json* scopes = reader.field("scopes", false);
  if (scopes == nullptr) return settings;
  const std::string at = reader.pointer("scopes");
  if (!scopes->is_array()) {
    reader.add(at, "expected an array of {\"scope\", \"allows\"}, got " + type_name(*scopes));
    return settings;
  }
  if (scopes->size() > kMaxScopes) {
    reader.add(at, "at most " + std::to_string(kMaxScopes) + " scopes, not " +
                       std::to_string(scopes->size()));
    return settings;
  }
  for (std::size_t i = 0; i < scopes->size(); ++i) {
    const json& entry = (*scopes)[i];
    const std::string entry_at = at + "/" + std::to_string(i);
    if (!entry.is_object()) {
      reader.add(entry_at, "expected an object {\"scope\", \"allows\"}, got " + type_name(entry));
      continue;
    }
    ObjectReader item(entry, entry_at, problems);
    item.reject_unknown(kScopeFields);
    item.string("$comment", false);
    auto scope = item.string("scope", true);
    auto allows = item.strings("allows", true);
    if (!scope || !allows) continue;
    bool good = true;
    if (scope->empty() || scope->find_first_of(" \"\\") != std::string::npos) {
      item.add(item.pointer("scope"),
               "a scope is one word without quotes or backslashes, not " + json(*scope).dump());
      good = false;
    }
    for (std::size_t k = 0; k < allows->size(); ++k) {
      if (!side_effect_from_name((*allows)[k])) {
        item.add(item.pointer("allows") + "/" + std::to_string(k),
                 json((*allows)[k]).dump() +
                     " is not a side-effect class (read_only, local_mutation, remote_mutation, "
                     "destructive)");
        good = false;
      }
    }
    if (good) settings.scopes.emplace_back(std::move(*scope), std::move(*allows));
  }
  return settings;
}

}  // namespace toolmux::catalog_file
