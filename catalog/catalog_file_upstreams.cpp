#include "catalog/catalog_file_sections.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <system_error>

#include "catalog/catalog_file_reader.h"
#include "src/base/redact.h"

namespace toolmux::catalog_file {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string_view> kUpstreamFields = {"$comment",
                                                       "command",
                                                       "args",
                                                       "cwd",
                                                       "env",
                                                       "url",
                                                       "headers",
                                                       "bearerToken",
                                                       "oauth",
                                                       "prefix",
                                                       "include",
                                                       "exclude",
                                                       "tools",
                                                       "start",
                                                       "startTimeoutMs",
                                                       "probeTimeoutMs",
                                                       "restart",
                                                       "circuitBreaker",
                                                       "readOnlyRetries",
                                                       "spotlight",
                                                       "redactPersonalData",
                                                       "description"};
const std::vector<std::string_view> kRestartFields = {"$comment", "initialDelayMs", "maxDelayMs"};
const std::vector<std::string_view> kBreakerFields = {"$comment", "enabled", "failures",
                                                      "cooldownMs"};
const std::vector<std::string_view> kUpstreamToolFields = {
    "$comment",  "name",   "description", "sideEffect",
    "timeoutMs", "pinned", "spotlight",   "redactPersonalData"};
const std::vector<std::string_view> kSecretFields = {"fromEnv", "fromFile"};
const std::vector<std::string_view> kOAuthFields = {"$comment",
                                                    "grant",
                                                    "clientId",
                                                    "clientSecret",
                                                    "privateKey",
                                                    "signingAlgorithm",
                                                    "tokenEndpointAuthMethod",
                                                    "issuer",
                                                    "scope",
                                                    "redirectPort"};
// What an upstream inherits from toolmux's environment (what MCP clients
// commonly pass a stdio server); the rest only through "env".
const std::vector<std::string> kUpstreamInheritedEnv = {"PATH",  "HOME", "USER", "LOGNAME",
                                                        "SHELL", "TERM", "LANG", "TMPDIR"};

bool strings_equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_variable_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool is_tool_name_text(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

std::optional<std::string> read_env_value(const json& value, const std::string& at,
                                          const fs::path& folder, Problems& problems) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_object()) {
    problems.push_back({at, "expected a string or an object (\"fromEnv\" or \"fromFile\"), got " +
                                type_name(value)});
    return std::nullopt;
  }
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kSecretFields);
  if (value.size() != 1 || (!value.contains("fromEnv") && !value.contains("fromFile"))) {
    reader.add(at, "give exactly one of \"fromEnv\" and \"fromFile\"");
    return std::nullopt;
  }
  if (auto variable = reader.string("fromEnv", false)) {
    const char* found = std::getenv(variable->c_str());
    if (!found) {
      reader.add(reader.pointer("fromEnv"),
                 "toolmux's environment has no variable " + json(*variable).dump());
      return std::nullopt;
    }
    // A value given by reference is a secret: it never appears in a result or
    // a log line (src/base/redact.h).
    register_secret(found);
    return std::string(found);
  }
  if (auto file = reader.string("fromFile", false)) {
    fs::path path(*file);
    if (path.is_relative()) path = folder / path;
    Problems read_problems;
    auto text = read_file(path, read_problems, kMaxSecretFileBytes);
    if (!text) {
      reader.add(reader.pointer("fromFile"), read_problems.front().message);
      return std::nullopt;
    }
    // A secret file usually ends with a newline that is not part of the value.
    if (!text->empty() && text->back() == '\n') text->pop_back();
    if (!text->empty() && text->back() == '\r') text->pop_back();
    register_secret(*text);
    return text;
  }
  return std::nullopt;
}

namespace {

// "oauth": the client that gets the upstream's tokens (see UpstreamOAuth).
std::optional<UpstreamOAuth> read_oauth(const json& value, const std::string& at,
                                        const fs::path& folder, Problems& problems) {
  const std::size_t before = problems.size();
  UpstreamOAuth oauth;
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kOAuthFields);
  reader.string("$comment", false);
  if (auto grant = reader.string("grant", true)) {
    if (*grant == "authorization_code") {
      oauth.grant = UpstreamOAuth::Grant::authorization_code;
    } else if (*grant != "client_credentials") {
      reader.add(reader.pointer("grant"),
                 "grant must be \"client_credentials\" (a client that needs no person) or "
                 "\"authorization_code\" (a person logs in once: toolmux login), not " +
                     json(*grant).dump());
    }
  }
  const bool code = oauth.grant == UpstreamOAuth::Grant::authorization_code;
  if (auto id = reader.string("clientId", !code)) oauth.client_id = std::move(*id);
  for (const char* field : {"clientSecret", "privateKey"}) {
    if (!value.contains(field)) continue;
    if (value[field].is_string()) {
      reader.add(reader.pointer(field),
                 "a secret is never written in the catalog: give {\"fromEnv\": \"VAR\"} or "
                 "{\"fromFile\": \"path\"}");
    } else if (auto secret =
                   read_env_value(value[field], reader.pointer(field), folder, problems)) {
      (std::string_view(field) == "clientSecret" ? oauth.client_secret : oauth.private_key_pem) =
          std::move(*secret);
    }
  }
  if (!code && value.contains("clientSecret") == value.contains("privateKey")) {
    reader.add(at, "give exactly one of \"clientSecret\" and \"privateKey\"");
  }
  if (code) {
    if (value.contains("privateKey")) {
      reader.add(reader.pointer("privateKey"),
                 "\"privateKey\" is for the client_credentials grant");
    }
    if (value.contains("clientSecret") && !value.contains("clientId")) {
      reader.add(at,
                 "a \"clientSecret\" belongs to a pre-registered client: give its \"clientId\"");
    }
  } else if (value.contains("redirectPort")) {
    reader.add(reader.pointer("redirectPort"),
               "\"redirectPort\" is for the authorization_code grant");
  }
  if (const auto it = value.find("redirectPort"); it != value.end() && code) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1024 ||
        it->get<std::int64_t>() > 65535) {
      reader.add(reader.pointer("redirectPort"),
                 "redirectPort must be a whole number from 1024 to 65535");
    } else {
      oauth.redirect_port = it->get<int>();
    }
  }
  if (auto alg = reader.string("signingAlgorithm", false)) {
    if (*alg != "ES256" && *alg != "ES384" && *alg != "RS256") {
      reader.add(
          reader.pointer("signingAlgorithm"),
          "signingAlgorithm must be \"ES256\", \"ES384\" or \"RS256\", not " + json(*alg).dump());
    } else {
      oauth.signing_algorithm = std::move(*alg);
    }
  }
  if (auto method = reader.string("tokenEndpointAuthMethod", false)) {
    if (*method != "client_secret_basic" && *method != "client_secret_post" &&
        *method != "private_key_jwt") {
      reader.add(reader.pointer("tokenEndpointAuthMethod"),
                 "tokenEndpointAuthMethod must be \"client_secret_basic\", "
                 "\"client_secret_post\" or \"private_key_jwt\", not " +
                     json(*method).dump());
    } else {
      oauth.token_endpoint_auth_method = std::move(*method);
    }
  }
  if (auto issuer = reader.string("issuer", false)) oauth.issuer = std::move(*issuer);
  if (auto scope = reader.string("scope", false)) oauth.scope = std::move(*scope);
  if (problems.size() != before) return std::nullopt;
  return oauth;
}

UpstreamToolOverride read_upstream_tool(const json& value, const std::string& at,
                                        Problems& problems) {
  UpstreamToolOverride change;
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kUpstreamToolFields);
  reader.string("$comment", false);
  change.name = reader.string("name", false);
  change.description = reader.string("description", false);
  if (auto effect = reader.string("sideEffect", false)) {
    if (!side_effect_from_name(*effect)) {
      reader.add(reader.pointer("sideEffect"),
                 "sideEffect must be \"read_only\", \"local_mutation\", \"remote_mutation\" or "
                 "\"destructive\", not " +
                     json(*effect).dump());
    } else {
      change.side_effect = *effect;
    }
  }
  if (auto timeout =
          reader.integer("timeoutMs", false, 1,
                         static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))) {
    change.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(*timeout));
  }
  if (auto pinned = reader.boolean("pinned")) change.pinned = *pinned;
  change.spotlight = reader.boolean("spotlight");
  change.redact_personal_data = read_personal_data_classes(reader, "redactPersonalData");
  return change;
}

std::optional<UpstreamSpec> read_upstream(const std::string& name, const json& value,
                                          const std::string& at, const fs::path& folder,
                                          Problems& problems) {
  const std::size_t before = problems.size();
  UpstreamSpec upstream;
  upstream.name = name;
  upstream.prefix = name + "_";
  if (name.empty() || name.size() > 64 || !is_tool_name_text(name)) {
    problems.push_back({at, "upstream name " + json(name).dump() +
                                ": use 1 to 64 ASCII letters, digits, '_', '-' or '.'"});
  }
  ObjectReader reader(value, at, problems);
  reader.reject_unknown(kUpstreamFields);
  reader.string("$comment", false);
  const bool has_url = value.contains("url");
  if (has_url && value.contains("command")) {
    reader.add(at,
               "give either \"command\" (a stdio server) or \"url\" (a Streamable HTTP "
               "server), not both");
  }
  if (has_url) {
    for (const char* field : {"args", "cwd", "env"}) {
      if (value.contains(field)) {
        reader.add(reader.pointer(field), std::string("\"") + field +
                                              "\" is for stdio servers (\"command\"), not \"url\"");
      }
    }
    if (auto url = reader.string("url", true)) {
      if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
        reader.add(reader.pointer("url"),
                   "the url must start with http:// or https://, got " + json(*url).dump());
      }
      upstream.url = std::move(*url);
    }
  } else {
    for (const char* field : {"headers", "bearerToken", "oauth"}) {
      if (value.contains(field)) {
        reader.add(reader.pointer(field),
                   std::string("\"") + field + "\" is for HTTP servers (\"url\"), not \"command\"");
      }
    }
    if (auto command = reader.string("command", true)) {
      if (command->empty()) {
        reader.add(reader.pointer("command"), "the command is empty");
      }
      upstream.argv.push_back(std::move(*command));
    }
  }
  if (const json* headers = reader.object("headers", false)) {
    for (const auto& [header, item] : headers->items()) {
      const std::string item_at = reader.pointer("headers") + "/" + pointer_token(header);
      if (header.empty() || !std::all_of(header.begin(), header.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
          })) {
        reader.add(item_at, "header name " + json(header).dump() + " is not a valid HTTP header");
        continue;
      }
      if (item.is_string() && (strings_equal_ignoring_case(header, "authorization") ||
                               strings_equal_ignoring_case(header, "cookie"))) {
        reader.add(item_at,
                   "a secret is never written in the catalog: give {\"fromEnv\": ...} "
                   "or {\"fromFile\": ...}, or \"bearerToken\"");
        continue;
      }
      if (auto resolved = read_env_value(item, item_at, folder, problems)) {
        upstream.headers.emplace_back(header, std::move(*resolved));
      }
    }
  }
  if (value.contains("bearerToken")) {
    const json& token = value["bearerToken"];
    if (token.is_string()) {
      reader.add(reader.pointer("bearerToken"),
                 "a secret is never written in the catalog: give {\"fromEnv\": \"VAR\"} or "
                 "{\"fromFile\": \"path\"}");
    } else if (auto resolved =
                   read_env_value(token, reader.pointer("bearerToken"), folder, problems)) {
      upstream.headers.emplace_back("Authorization", "Bearer " + *resolved);
    }
  }
  if (const json* oauth = reader.object("oauth", false)) {
    if (value.contains("bearerToken")) {
      reader.add(at,
                 "give either \"bearerToken\" (a fixed token) or \"oauth\" (tokens from the "
                 "server's authorization server), not both");
    }
    upstream.oauth = read_oauth(*oauth, reader.pointer("oauth"), folder, problems);
  }
  if (auto start = reader.string("start", false)) {
    if (*start == "lazy") {
      upstream.lifecycle.lazy = true;
    } else if (*start != "eager") {
      reader.add(reader.pointer("start"),
                 "start must be \"eager\" or \"lazy\", not " + json(*start).dump());
    }
  }
  constexpr std::uint64_t kMaxMs = 24ull * 3600 * 1000;
  if (auto ms = reader.integer("startTimeoutMs", false, 1, kMaxMs)) {
    upstream.lifecycle.start_timeout = std::chrono::milliseconds(*ms);
  }
  if (auto ms = reader.integer("probeTimeoutMs", false, 1, kMaxMs)) {
    upstream.lifecycle.probe_timeout = std::chrono::milliseconds(*ms);
  }
  upstream.spotlight = reader.boolean("spotlight");
  if (auto classes = read_personal_data_classes(reader, "redactPersonalData")) {
    upstream.redact_personal_data = *classes;
  }
  if (auto description = reader.string("description", false)) {
    constexpr std::size_t kMostDescription = 2000;
    if (description->size() > kMostDescription) {
      reader.add(reader.pointer("description"), "at most " + std::to_string(kMostDescription) +
                                                    " bytes, got " +
                                                    std::to_string(description->size()));
    } else {
      upstream.description = *description;
    }
  }
  if (auto retries = reader.integer("readOnlyRetries", false, 0, 5)) {
    upstream.lifecycle.read_only_retries = static_cast<int>(*retries);
  }
  if (const json* restart = reader.object("restart", false)) {
    ObjectReader sub(*restart, reader.pointer("restart"), problems);
    sub.reject_unknown(kRestartFields);
    sub.string("$comment", false);
    if (auto ms = sub.integer("initialDelayMs", false, 1, kMaxMs)) {
      upstream.lifecycle.restart_initial = std::chrono::milliseconds(*ms);
    }
    if (auto ms = sub.integer("maxDelayMs", false, 1, kMaxMs)) {
      upstream.lifecycle.restart_max = std::chrono::milliseconds(*ms);
    }
    if (upstream.lifecycle.restart_max < upstream.lifecycle.restart_initial) {
      sub.add(sub.pointer("maxDelayMs"), "maxDelayMs is smaller than initialDelayMs");
    }
  }
  if (const json* breaker = reader.object("circuitBreaker", false)) {
    ObjectReader sub(*breaker, reader.pointer("circuitBreaker"), problems);
    sub.reject_unknown(kBreakerFields);
    sub.string("$comment", false);
    // The section turns it on; "enabled": false keeps the settings, off.
    upstream.lifecycle.breaker = sub.boolean("enabled").value_or(true);
    if (auto failures = sub.integer("failures", false, 1, 1000)) {
      upstream.lifecycle.breaker_failures = static_cast<int>(*failures);
    }
    if (auto ms = sub.integer("cooldownMs", false, 1, kMaxMs)) {
      upstream.lifecycle.breaker_cooldown = std::chrono::milliseconds(*ms);
    }
  }
  if (auto args = reader.strings("args", false)) {
    upstream.argv.insert(upstream.argv.end(), args->begin(), args->end());
  }
  if (auto cwd = reader.string("cwd", false)) {
    fs::path given(*cwd);
    fs::path resolved = (given.is_absolute() ? given : folder / given).lexically_normal();
    std::error_code ec;
    if (given.empty() || !fs::is_directory(resolved, ec)) {
      reader.add(reader.pointer("cwd"), "the working directory " + json(*cwd).dump() +
                                            " is not a directory (resolved to " +
                                            resolved.string() + ")");
    }
    upstream.cwd = resolved;
  }
  std::map<std::string, std::string> env;
  for (const auto& variable : kUpstreamInheritedEnv) {
    if (const char* found = std::getenv(variable.c_str())) env[variable] = found;
  }
  if (const json* given = reader.object("env", false)) {
    for (const auto& [variable, item] : given->items()) {
      const std::string item_at = reader.pointer("env") + "/" + pointer_token(variable);
      if (!is_variable_name(variable)) {
        reader.add(item_at, "variable name " + json(variable).dump() +
                                " does not match [A-Za-z_][A-Za-z0-9_]*");
        continue;
      }
      if (auto resolved = read_env_value(item, item_at, folder, problems)) {
        env[variable] = std::move(*resolved);
      }
    }
  }
  for (const auto& [variable, text] : env) upstream.env.push_back(variable + "=" + text);
  if (auto prefix = reader.string("prefix", false)) {
    if (prefix->size() > 64 || !is_tool_name_text(*prefix)) {
      reader.add(reader.pointer("prefix"),
                 "the prefix may hold at most 64 ASCII letters, digits, '_', '-' or '.'");
    }
    upstream.prefix = std::move(*prefix);
  }
  upstream.include = reader.strings("include", false);
  if (auto exclude = reader.strings("exclude", false)) upstream.exclude = std::move(*exclude);
  reader.object_members("tools", "what to change in the tool",
                        [&](const std::string& tool, const json& item, const std::string& tool_at) {
                          upstream.tools[tool] = read_upstream_tool(item, tool_at, problems);
                        });
  if (problems.size() != before) return std::nullopt;
  return upstream;
}

}  // namespace

// "upstreams": {"<name>": {...}}, by name.
std::vector<UpstreamSpec> read_upstreams(const json& value, const fs::path& folder,
                                         Problems& problems) {
  std::vector<UpstreamSpec> upstreams;
  for (const auto& [name, item] : value.items()) {
    const std::string at = "/upstreams/" + pointer_token(name);
    if (!item.is_object()) {
      problems.push_back({at, "expected an object (an upstream server), got " + type_name(item)});
      continue;
    }
    if (auto upstream = read_upstream(name, item, at, folder, problems)) {
      upstreams.push_back(std::move(*upstream));
    }
  }
  return upstreams;
}

}  // namespace toolmux::catalog_file
