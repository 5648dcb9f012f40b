#include "transports/oauth_client.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "src/base/ascii.h"
#include "src/base/base64.h"
#include "src/base/random_id.h"
#include "src/base/untrusted_json.h"
#include "transports/jwt_assertion.h"
#include "transports/oauth_rules.h"
#include "transports/url.h"
#include "transports/www_authenticate.h"

namespace toolmux {
namespace {

using json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

constexpr std::size_t kMaxQuotedError = 200;  // of a server's error text, in our messages

// A URL as it may be shown: no credentials, no query.
std::string shown(const std::string& url) {
  auto parsed = parse_http_url(url);
  return parsed.ok() ? parsed.value().shown : "(an unreadable URL)";
}

// A server's text in our messages: cut short, control characters dropped.
std::string said(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, kMaxQuotedError)) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) out += c;
  }
  if (text.size() > kMaxQuotedError) out += "...";
  return out;
}

struct Fetched {
  int status = 0;
  std::string body;
  std::string location;
};

// One HTTP exchange, bounded: `timeout` to connect, send and read, at most
// `max_bytes` of body, no redirect followed.
Result<Fetched> fetch(const std::string& method, const std::string& url,
                      const httplib::Headers& headers, const std::string& body,
                      const std::string& content_type, std::chrono::milliseconds timeout,
                      std::size_t max_bytes) {
  if (Status secure = require_secure_url(url, "the URL"); !secure.ok()) return secure;
  auto parsed = parse_http_url(url);
  if (!parsed.ok()) return parsed.status();
  httplib::Client client(parsed.value().origin);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  client.set_follow_location(false);
  client.set_keep_alive(false);
  httplib::Request req;
  req.method = method;
  req.path = parsed.value().path;
  req.headers = headers;
  req.headers.emplace("Accept", "application/json");
  if (!content_type.empty()) {
    req.headers.emplace("Content-Type", content_type);
    req.body = body;
  }
  Fetched out;
  bool too_large = false;
  req.response_handler = [&](const httplib::Response& res) {
    out.status = res.status;
    out.location = res.get_header_value("Location");
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
    if (size > max_bytes - out.body.size()) {
      too_large = true;
      return false;
    }
    out.body.append(data, size);
    return true;
  };
  auto result = client.send(req);
  if (too_large) {
    return Status::resource_exhausted("the answer from " + parsed.value().shown +
                                      " is over the limit of " + std::to_string(max_bytes) +
                                      " bytes");
  }
  if (!result) {
    return Status::unavailable("no answer from " + parsed.value().shown + ": " +
                               httplib::to_string(result.error()));
  }
  return out;
}

// A JSON object from `body`, or why not (naming `what`).
Result<json> json_object(const std::string& body, const std::string& what) {
  ParsedJson parsed = parse_untrusted_json(body, JsonLimits{64, 128, 100000});
  if (parsed.syntax_error) {
    return Status::invalid_argument(what + " is not JSON (" + *parsed.syntax_error + ")");
  }
  if (!parsed.violations.empty()) {
    return Status::invalid_argument(what + " breaks a JSON rule at " +
                                    parsed.violations.front().pointer + ": " +
                                    parsed.violations.front().message);
  }
  if (!parsed.value.is_object()) return Status::invalid_argument(what + " is not a JSON object");
  return std::move(parsed.value);
}

std::string string_member(const json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Whether `object` has `name` set to true (anything else, or nothing, is false).
bool flag_member(const json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::vector<std::string> strings_member(const json& object, const char* name) {
  std::vector<std::string> out;
  const auto it = object.find(name);
  if (it == object.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The OAuth error of a failed token or registration answer, for a message.
std::string oauth_error(const Fetched& f) {
  std::string out = "HTTP " + std::to_string(f.status);
  const Result<json> parsed = json_object(f.body, "the error");
  const json body = parsed.ok() ? parsed.value() : json();
  if (body.is_object()) {
    if (std::string e = string_member(body, "error"); !e.empty()) out += ", " + said(e);
    if (std::string d = string_member(body, "error_description"); !d.empty()) {
      out += " (" + said(d) + ")";
    }
  }
  return out;
}

// Where one authorization goes, found afresh on each challenge.
struct Discovery {
  std::string resource;  // the resource parameter
  std::vector<std::string> resource_scopes;
  std::string issuer;
  json metadata = json::object();  // {} when the server has none (2025-03-26 fallback)
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string registration_endpoint;
};

}  // namespace

struct OAuthClient::State {
  // The token, the authorization server it came from, and the scopes asked for.
  std::string access_token;
  std::string refresh_token;
  std::string token_issuer;
  std::vector<std::string> scopes;
  // The client the authorization server knows (registered, CIMD or pre-registered).
  std::string client_issuer;
  std::string client_id;
  std::string client_secret;
  std::string auth_method;
  // Where the token came from, enough to refresh it without a new discovery.
  std::string token_endpoint;
  std::string resource;
  std::int64_t expires_at = 0;  // seconds since the epoch; 0 = not said
  bool login_loaded = false;    // Options::load_login asked once
  // A refresh that failed is not tried again ahead of expiry before this.
  std::chrono::steady_clock::time_point no_refresh_before{};
};

namespace {

// The longest token life believed (ten years); a longer expires_in is ignored.
constexpr std::int64_t kMaxExpiresIn = std::int64_t{10} * 365 * 24 * 3600;
constexpr int kLoginVersion = 1;
// After a refresh ahead of expiry failed, how long before another is tried.
constexpr std::chrono::seconds kRefreshRetryPause{30};

std::int64_t epoch_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The login as it is kept (OAuthClient::login_text); "" before any token.
std::string login_record(const OAuthClient::Options& options, const OAuthClient::State& state) {
  if (state.access_token.empty()) return {};
  const json record = {{"version", kLoginVersion},
                       {"server_url", options.server_url},
                       {"issuer", state.token_issuer},
                       {"token_endpoint", state.token_endpoint},
                       {"resource", state.resource},
                       {"client_id", state.client_id},
                       {"client_secret", state.client_secret},
                       {"auth_method", state.auth_method},
                       {"access_token", state.access_token},
                       {"refresh_token", state.refresh_token},
                       {"expires_at", state.expires_at},
                       {"scopes", state.scopes}};
  return record.dump();
}

// Takes the login in `text` into `state`; false (state unchanged) when it is
// unreadable, of another version or for another server URL.
bool adopt_login(const OAuthClient::Options& options, OAuthClient::State& state,
                 const std::string& text) {
  if (text.empty()) return false;
  ParsedJson parsed = parse_untrusted_json(text, JsonLimits{8, 64, 100000});
  if (!parsed.ok() || !parsed.value.is_object()) return false;
  const json& r = parsed.value;
  const auto number = [&r](const char* name) -> std::int64_t {
    const auto it = r.find(name);
    return it != r.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
  };
  if (number("version") != kLoginVersion || string_member(r, "server_url") != options.server_url ||
      string_member(r, "access_token").empty() || string_member(r, "issuer").empty()) {
    return false;
  }
  // Pre-registered credentials bound to an issuer are not used with another.
  if (!options.issuer.empty() && options.issuer != string_member(r, "issuer")) return false;
  const std::string access = string_member(r, "access_token");
  if (access.find_first_of("\r\n") != std::string::npos) return false;
  state.access_token = access;
  state.refresh_token = string_member(r, "refresh_token");
  state.token_issuer = string_member(r, "issuer");
  state.client_issuer = state.token_issuer;
  state.client_id = string_member(r, "client_id");
  state.client_secret = string_member(r, "client_secret");
  state.auth_method = string_member(r, "auth_method");
  state.token_endpoint = string_member(r, "token_endpoint");
  state.resource = string_member(r, "resource");
  state.expires_at = std::max<std::int64_t>(0, number("expires_at"));
  state.scopes = strings_member(r, "scopes");
  return true;
}

class Flow {
 public:
  Flow(const OAuthClient::Options& options, OAuthClient::State& state)
      : options_(options), state_(state) {}

  Result<Fetched> get(const std::string& url) {
    return fetch("GET", url, {}, "", "", options_.timeout, options_.max_response_bytes);
  }

  Result<Discovery> discover(const std::optional<AuthChallenge>& challenge) {
    Discovery d;
    std::vector<std::string> prm_urls;
    if (auto named = challenge ? challenge->param("resource_metadata") : std::nullopt; named) {
      prm_urls.push_back(*named);
    } else {
      auto urls = protected_resource_metadata_urls(options_.server_url);
      if (!urls.ok()) return urls.status();
      prm_urls = std::move(urls).value();
    }
    std::optional<json> prm;
    std::string prm_url;
    for (const auto& url : prm_urls) {
      auto f = get(url);
      if (!f.ok()) return f.status();
      if (f.value().status != 200) continue;
      auto doc = json_object(f.value().body, "the protected resource metadata at " + shown(url));
      if (!doc.ok()) return doc.status();
      prm = std::move(doc).value();
      prm_url = url;
      break;
    }
    if (prm) {
      d.resource = string_member(*prm, "resource");
      if (d.resource.empty()) {
        return Status::invalid_argument("the protected resource metadata at " + shown(prm_url) +
                                        " names no resource");
      }
      if (!resource_covers(d.resource, options_.server_url)) {
        return Status::invalid_argument("the protected resource metadata at " + shown(prm_url) +
                                        " is for " + said(d.resource) + ", not for " +
                                        shown(options_.server_url) +
                                        " (RFC 9728 §3.3): toolmux will not authorize against it");
      }
      const auto servers = strings_member(*prm, "authorization_servers");
      if (servers.empty()) {
        return Status::invalid_argument("the protected resource metadata at " + shown(prm_url) +
                                        " names no authorization server");
      }
      d.issuer = servers.front();
      d.resource_scopes = strings_member(*prm, "scopes_supported");
    } else {
      // 2025-03-26: no protected resource metadata; the server's origin is
      // its authorization server.
      d.resource = options_.server_url;
      d.issuer = url_authority(options_.server_url);
    }

    auto urls = authorization_server_metadata_urls(d.issuer);
    if (!urls.ok()) return urls.status();
    bool found = false;
    for (const auto& url : urls.value()) {
      auto f = get(url);
      if (!f.ok()) return f.status();
      if (f.value().status != 200) continue;
      auto doc = json_object(f.value().body, "the authorization server metadata at " + shown(url));
      if (!doc.ok()) return doc.status();
      d.metadata = std::move(doc).value();
      // RFC 8414 §3.3: the issuer must be the one the URL was made from.
      if (const std::string issuer = string_member(d.metadata, "issuer"); issuer != d.issuer) {
        return Status::invalid_argument("the authorization server metadata at " + shown(url) +
                                        " names the issuer " + said(issuer) + ", not " +
                                        said(d.issuer) + " (RFC 8414 §3.3)");
      }
      found = true;
      break;
    }
    if (found) {
      d.authorization_endpoint = string_member(d.metadata, "authorization_endpoint");
      d.token_endpoint = string_member(d.metadata, "token_endpoint");
      d.registration_endpoint = string_member(d.metadata, "registration_endpoint");
    } else if (!prm) {
      // 2025-03-26's default endpoints.
      d.authorization_endpoint = d.issuer + "/authorize";
      d.token_endpoint = d.issuer + "/token";
      d.registration_endpoint = d.issuer + "/register";
    } else {
      return Status::unavailable("the authorization server " + said(d.issuer) +
                                 " has no metadata at any of its well-known URLs");
    }
    if (d.token_endpoint.empty()) {
      return Status::invalid_argument("the authorization server " + said(d.issuer) +
                                      " names no token_endpoint");
    }
    for (const std::string* url :
         {&d.authorization_endpoint, &d.token_endpoint, &d.registration_endpoint}) {
      if (url->empty()) continue;
      if (Status s = require_secure_url(*url, "the authorization server's endpoint"); !s.ok()) {
        return s;
      }
    }
    return d;
  }

  // The client for `d` (code grant): pre-registered, a metadata document, or
  // registered now.
  Status ensure_client(const Discovery& d) {
    const auto supported = supported_auth_methods(d);
    if (!options_.client_id.empty()) {
      if (Status s = check_pre_registered(d); !s.ok()) return s;
      state_.client_issuer = d.issuer;
      state_.client_id = options_.client_id;
      state_.client_secret = options_.client_secret;
      state_.auth_method = options_.token_endpoint_auth_method.empty()
                               ? auth_method_for(!options_.client_secret.empty(), supported)
                               : options_.token_endpoint_auth_method;
      return Status::ok_status();
    }
    if (state_.client_issuer == d.issuer && !state_.client_id.empty()) return Status::ok_status();
    // Credentials belong to the authorization server that issued them (SEP-2352).
    state_.client_issuer.clear();
    state_.client_id.clear();
    state_.client_secret.clear();
    state_.auth_method.clear();
    if (!options_.client_metadata_url.empty() &&
        flag_member(d.metadata, "client_id_metadata_document_supported")) {
      state_.client_issuer = d.issuer;
      state_.client_id = options_.client_metadata_url;
      state_.auth_method = "none";
      return Status::ok_status();
    }
    if (d.registration_endpoint.empty()) {
      return Status::invalid_argument(
          "the authorization server " + said(d.issuer) +
          " offers no client registration and toolmux has no client_id for it: configure a "
          "pre-registered client");
    }
    return register_client(d, supported);
  }

  Status register_client(const Discovery& d, const std::vector<std::string>& supported) {
    const std::string method = contains(supported, "none")                  ? "none"
                               : contains(supported, "client_secret_basic") ? "client_secret_basic"
                               : contains(supported, "client_secret_post")  ? "client_secret_post"
                                                                            : "none";
    json grants = json::array({"authorization_code"});
    if (contains(grant_types(d), "refresh_token")) grants.push_back("refresh_token");
    const json request = {{"client_name", options_.client_name},
                          {"redirect_uris", json::array({options_.redirect_uri})},
                          {"grant_types", grants},
                          {"response_types", json::array({"code"})},
                          {"token_endpoint_auth_method", method},
                          {"application_type", "native"}};
    auto f = fetch("POST", d.registration_endpoint, {}, request.dump(), "application/json",
                   options_.timeout, options_.max_response_bytes);
    if (!f.ok()) return f.status();
    if (f.value().status != 201 && f.value().status != 200) {
      return Status::unavailable("the client registration at " + shown(d.registration_endpoint) +
                                 " failed: " + oauth_error(f.value()));
    }
    auto doc = json_object(
        f.value().body, "the client registration's answer from " + shown(d.registration_endpoint));
    if (!doc.ok()) return doc.status();
    const std::string id = string_member(doc.value(), "client_id");
    if (id.empty()) {
      return Status::invalid_argument("the client registration's answer from " +
                                      shown(d.registration_endpoint) + " has no client_id");
    }
    state_.client_issuer = d.issuer;
    state_.client_id = id;
    state_.client_secret = string_member(doc.value(), "client_secret");
    state_.auth_method = string_member(doc.value(), "token_endpoint_auth_method");
    if (state_.auth_method.empty()) {
      state_.auth_method = auth_method_for(!state_.client_secret.empty(), supported);
    }
    return Status::ok_status();
  }

  Status authorization_code(const Discovery& d, const std::vector<std::string>& scopes) {
    if (d.authorization_endpoint.empty()) {
      return Status::invalid_argument("the authorization server " + said(d.issuer) +
                                      " names no authorization_endpoint");
    }
    // PKCE S256 (MCP "Authorization Code Protection"): a server whose metadata
    // does not list it is not used.
    if (!d.metadata.empty() &&
        !contains(strings_member(d.metadata, "code_challenge_methods_supported"), "S256")) {
      return Status::invalid_argument("the authorization server " + said(d.issuer) +
                                      " does not list PKCE S256 in "
                                      "code_challenge_methods_supported: toolmux will not use it");
    }
    // No person at hand (a server): never register, never start a login.
    if (!options_.authorize) return Status::unavailable(options_.login_needed);
    if (Status s = ensure_client(d); !s.ok()) return s;
    const std::string verifier = pkce_verifier();
    const std::string expected_state = random_id(16);
    Fields query = {{"response_type", "code"},
                    {"client_id", state_.client_id},
                    {"redirect_uri", options_.redirect_uri},
                    {"code_challenge", pkce_challenge(verifier)},
                    {"code_challenge_method", "S256"},
                    {"state", expected_state},
                    {"resource", d.resource}};
    if (!scopes.empty()) query.emplace_back("scope", join_scopes(scopes));
    const char joiner = d.authorization_endpoint.find('?') == std::string::npos ? '?' : '&';
    auto redirect = options_.authorize(d.authorization_endpoint + joiner + form_encode(query),
                                       options_.redirect_uri);
    if (!redirect.ok()) return redirect.status();
    auto params = query_params(redirect.value());
    if (!params) {
      return Status::invalid_argument("the authorization response's query cannot be decoded");
    }
    const auto param = [&](const char* name) -> std::optional<std::string> {
      for (const auto& [k, v] : *params) {
        if (k == name) return v;
      }
      return std::nullopt;
    };
    if (auto error = param("error")) {
      std::string why = "the authorization server " + said(d.issuer) +
                        " refused the authorization: " + said(*error);
      if (auto desc = param("error_description")) why += " (" + said(*desc) + ")";
      return Status::unavailable(why);
    }
    if (param("state") != expected_state) {
      return Status::invalid_argument(
          "the authorization response's state is not the one toolmux sent: refused");
    }
    // RFC 9207 §2.4: an iss present must be the issuer, exactly; one absent
    // where the server said it sends it is refused.
    if (auto iss = param("iss")) {
      if (*iss != d.issuer) {
        return Status::invalid_argument("the authorization response came from the issuer " +
                                        said(*iss) + ", not " + said(d.issuer) +
                                        " (RFC 9207): refused");
      }
    } else if (flag_member(d.metadata, "authorization_response_iss_parameter_supported")) {
      return Status::invalid_argument("the authorization response has no iss although " +
                                      said(d.issuer) + " says it sends one (RFC 9207): refused");
    }
    auto code = param("code");
    if (!code || code->empty()) {
      return Status::invalid_argument("the authorization response has no code");
    }
    Fields form = {{"grant_type", "authorization_code"},
                   {"code", *code},
                   {"redirect_uri", options_.redirect_uri},
                   {"code_verifier", verifier},
                   {"resource", d.resource}};
    return token_request(d, std::move(form), scopes);
  }

  Status refresh(const Discovery& d) {
    Fields form = {{"grant_type", "refresh_token"},
                   {"refresh_token", state_.refresh_token},
                   {"resource", d.resource}};
    return token_request(d, std::move(form), state_.scopes);
  }

  Status client_credentials(const Discovery& d, const std::vector<std::string>& chosen) {
    if (Status s = check_pre_registered(d); !s.ok()) return s;
    state_.client_issuer = d.issuer;
    state_.client_id = options_.client_id;
    state_.client_secret = options_.client_secret;
    state_.auth_method = options_.token_endpoint_auth_method;
    if (state_.auth_method.empty()) {
      state_.auth_method =
          !options_.private_key_pem.empty()
              ? "private_key_jwt"
              : auth_method_for(!options_.client_secret.empty(), supported_auth_methods(d));
    }
    const std::vector<std::string> scopes =
        options_.scope.empty() ? chosen : split_scopes(options_.scope);
    Fields form = {{"grant_type", "client_credentials"}, {"resource", d.resource}};
    if (!scopes.empty()) form.emplace_back("scope", join_scopes(scopes));
    return token_request(d, std::move(form), scopes);
  }

 private:
  Status check_pre_registered(const Discovery& d) const {
    if (!options_.issuer.empty() && options_.issuer != d.issuer) {
      return Status::invalid_argument("the configured client is registered with " +
                                      said(options_.issuer) + ", but " +
                                      shown(options_.server_url) + " now names " + said(d.issuer) +
                                      ": toolmux will not use it there");
    }
    return Status::ok_status();
  }

  static std::vector<std::string> supported_auth_methods(const Discovery& d) {
    // RFC 8414 §2: absent means client_secret_basic.
    if (!d.metadata.contains("token_endpoint_auth_methods_supported")) {
      return {"client_secret_basic"};
    }
    return strings_member(d.metadata, "token_endpoint_auth_methods_supported");
  }

  static std::vector<std::string> grant_types(const Discovery& d) {
    if (!d.metadata.contains("grant_types_supported")) {
      return {"authorization_code", "implicit"};  // RFC 8414 §2's default
    }
    return strings_member(d.metadata, "grant_types_supported");
  }

  static std::string auth_method_for(bool has_secret, const std::vector<std::string>& supported) {
    if (!has_secret) return "none";
    if (contains(supported, "client_secret_basic")) return "client_secret_basic";
    if (contains(supported, "client_secret_post")) return "client_secret_post";
    return "client_secret_basic";
  }

  // The client's authentication on `form` (and `headers`), by its method.
  Status authenticate(const Discovery& d, Fields& form, httplib::Headers& headers) const {
    const std::string& method = state_.auth_method;
    if (method == "client_secret_basic") {
      headers.emplace("Authorization",
                      "Basic " + base64_encode(form_encode(state_.client_id) + ":" +
                                               form_encode(state_.client_secret)));
    } else if (method == "client_secret_post") {
      form.emplace_back("client_id", state_.client_id);
      form.emplace_back("client_secret", state_.client_secret);
    } else if (method == "private_key_jwt") {
      auto assertion = sign_client_assertion({state_.client_id, d.issuer}, options_.private_key_pem,
                                             options_.signing_algorithm);
      if (!assertion.ok()) {
        return Status::invalid_argument("private_key_jwt for " + said(state_.client_id) + ": " +
                                        assertion.message());
      }
      form.emplace_back("client_id", state_.client_id);
      form.emplace_back("client_assertion_type",
                        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
      form.emplace_back("client_assertion", std::move(assertion).value());
    } else if (method == "none") {
      form.emplace_back("client_id", state_.client_id);
    } else {
      return Status::invalid_argument("the token endpoint authentication method " + said(method) +
                                      " is not one toolmux uses");
    }
    return Status::ok_status();
  }

  Status token_request(const Discovery& d, Fields form, const std::vector<std::string>& scopes) {
    httplib::Headers headers;
    if (Status s = authenticate(d, form, headers); !s.ok()) return s;
    auto f =
        fetch("POST", d.token_endpoint, headers, form_encode(form),
              "application/x-www-form-urlencoded", options_.timeout, options_.max_response_bytes);
    if (!f.ok()) return f.status();
    const std::string grant = form.front().second;
    if (f.value().status != 200) {
      return Status::unavailable("the token endpoint " + shown(d.token_endpoint) + " refused the " +
                                 grant + " grant: " + oauth_error(f.value()));
    }
    auto doc = json_object(f.value().body, "the token endpoint's answer (" + grant + ")");
    if (!doc.ok()) return doc.status();
    const std::string access = string_member(doc.value(), "access_token");
    if (access.empty()) {
      return Status::invalid_argument("the token endpoint " + shown(d.token_endpoint) +
                                      " answered the " + grant + " grant without an access_token");
    }
    if (const std::string type = string_member(doc.value(), "token_type");
        !type.empty() && ascii_lower(type) != "bearer") {
      return Status::invalid_argument("the token endpoint " + shown(d.token_endpoint) +
                                      " gave a token of type " + said(type) +
                                      "; toolmux uses Bearer tokens only");
    }
    if (access.find_first_of("\r\n") != std::string::npos) {
      return Status::invalid_argument("the token endpoint " + shown(d.token_endpoint) +
                                      " gave a token that cannot go in a header");
    }
    state_.access_token = access;
    if (std::string r = string_member(doc.value(), "refresh_token"); !r.empty()) {
      state_.refresh_token = std::move(r);
    } else if (grant != "refresh_token") {
      state_.refresh_token.clear();
    }
    state_.token_issuer = d.issuer;
    state_.scopes = scopes;
    state_.token_endpoint = d.token_endpoint;
    state_.resource = d.resource;
    state_.expires_at = 0;
    if (const auto it = doc.value().find("expires_in");
        it != doc.value().end() && it->is_number_integer()) {
      const std::int64_t seconds = it->get<std::int64_t>();
      if (seconds > 0 && seconds <= kMaxExpiresIn) state_.expires_at = epoch_seconds() + seconds;
    }
    if (options_.on_login) options_.on_login(login_record(options_, state_));
    return Status::ok_status();
  }

  const OAuthClient::Options& options_;
  OAuthClient::State& state_;
};

}  // namespace

OAuthClient::OAuthClient(Options options)
    : options_(std::move(options)), state_(std::make_unique<State>()) {}

OAuthClient::~OAuthClient() = default;

Result<std::shared_ptr<OAuthClient>> OAuthClient::create(Options options) {
  if (auto url = parse_http_url(options.server_url); !url.ok()) {
    return Status::invalid_argument("the OAuth client's server URL: " + url.message());
  }
  if (options.grant == Grant::client_credentials) {
    if (options.client_id.empty() ||
        (options.client_secret.empty() && options.private_key_pem.empty())) {
      return Status::invalid_argument(
          "the client_credentials grant needs a client_id and a client_secret or a private key");
    }
  } else if ((options.redirect_uri.empty() || !options.authorize) && options.login_needed.empty()) {
    return Status::invalid_argument(
        "the authorization code grant needs a redirect_uri and a way to authorize, or what "
        "to say when a login is needed");
  }
  if (options.max_response_bytes == 0) {
    return Status::invalid_argument("the OAuth client's max_response_bytes must be above 0");
  }
  return std::shared_ptr<OAuthClient>(new OAuthClient(std::move(options)));
}

void OAuthClient::load_login_once() {
  if (state_->login_loaded) return;
  state_->login_loaded = true;
  if (options_.load_login) adopt_login(options_, *state_, options_.load_login());
}

std::string OAuthClient::authorization() {
  std::lock_guard lock(mutex_);
  load_login_once();
  State& st = *state_;
  // Refreshed ahead of its expiry, by the request that finds it due; a
  // refresh that fails leaves the token as it is (its 401 takes over) and is
  // not tried again for a while.
  if (st.expires_at != 0 && !st.refresh_token.empty() && !st.token_endpoint.empty() &&
      epoch_seconds() + options_.refresh_ahead.count() >= st.expires_at &&
      std::chrono::steady_clock::now() >= st.no_refresh_before) {
    Discovery d;
    d.issuer = st.token_issuer;
    d.token_endpoint = st.token_endpoint;
    d.resource = st.resource;
    Flow flow(options_, st);
    if (!flow.refresh(d).ok()) {
      st.no_refresh_before = std::chrono::steady_clock::now() + kRefreshRetryPause;
    }
  }
  return st.access_token.empty() ? std::string() : "Bearer " + st.access_token;
}

std::string OAuthClient::login_text() {
  std::lock_guard lock(mutex_);
  return login_record(options_, *state_);
}

bool OAuthClient::usable_login(const std::string& server_url, const std::string& issuer,
                               const std::string& text) {
  Options options;
  options.server_url = server_url;
  options.issuer = issuer;
  State state;
  return adopt_login(options, state, text);
}

Status OAuthClient::challenged(int status, const std::string& www_authenticate,
                               const std::string& sent) {
  std::lock_guard lock(mutex_);
  const std::string current =
      state_->access_token.empty() ? std::string() : "Bearer " + state_->access_token;
  // Refused with a token another request has replaced meanwhile: try the new one.
  if (status == 401 && current != sent && !current.empty()) return Status::ok_status();

  const std::optional<AuthChallenge> challenge = bearer_challenge(www_authenticate);
  const bool step_up = status == 403;
  if (step_up) {
    const std::string error = challenge ? challenge->param("error").value_or("") : "";
    if (error != "insufficient_scope") {
      return Status::unavailable(
          "HTTP 403 Forbidden from " + shown(options_.server_url) +
          (error.empty() ? std::string() : " (error=\"" + said(error) + "\")") +
          ": the token is refused and asking for more scope would not help");
    }
  }
  Flow flow(options_, *state_);
  auto d = flow.discover(challenge);
  if (!d.ok()) {
    return Status::unavailable("authorizing with " + shown(options_.server_url) + ": " +
                               d.message());
  }
  const Discovery& found = d.value();
  // Tokens belong to the authorization server that issued them.
  if (state_->token_issuer != found.issuer) {
    state_->access_token.clear();
    state_->refresh_token.clear();
    state_->scopes.clear();
  }
  const std::optional<std::string> challenged_scope =
      challenge ? challenge->param("scope") : std::nullopt;
  const std::vector<std::string> scopes = choose_scopes(
      challenged_scope ? std::optional<std::string_view>(*challenged_scope) : std::nullopt,
      found.resource_scopes, step_up ? state_->scopes : std::vector<std::string>{},
      strings_member(found.metadata, "scopes_supported"));
  Status done = Status::ok_status();
  if (!step_up && !state_->refresh_token.empty()) {
    done = flow.refresh(found);
    if (done.ok()) return done;
    state_->refresh_token.clear();  // refused: authorize anew
    // Another process on the same store may have refreshed it first (a
    // refresh token is often good for one use): take its login when it holds
    // another token.
    if (options_.load_login) {
      const std::string refused = state_->access_token;
      State fresh;
      if (adopt_login(options_, fresh, options_.load_login()) && fresh.access_token != refused) {
        fresh.login_loaded = true;
        *state_ = std::move(fresh);
        return Status::ok_status();
      }
    }
  }
  done = options_.grant == Grant::client_credentials ? flow.client_credentials(found, scopes)
                                                     : flow.authorization_code(found, scopes);
  if (!done.ok()) {
    return Status::unavailable("authorizing with " + shown(options_.server_url) + ": " +
                               done.message());
  }
  return done;
}

OAuthClient::Authorize OAuthClient::follow_redirects(std::chrono::milliseconds timeout) {
  return [timeout](const std::string& authorization_url,
                   const std::string& redirect_uri) -> Result<std::string> {
    std::string url = authorization_url;
    const std::string target = redirect_uri.substr(0, redirect_uri.find('?'));
    for (int hop = 0; hop <= kMaxAuthorizeRedirects; ++hop) {
      auto f = fetch("GET", url, {}, "", "", timeout, std::size_t{1} << 16);
      if (!f.ok()) return f.status();
      const Fetched& got = f.value();
      if (got.status < 300 || got.status >= 400 || got.location.empty()) {
        return Status::unavailable("the authorization server answered " + shown(url) +
                                   " with HTTP " + std::to_string(got.status) +
                                   ", not a redirect: it needs a person to log in");
      }
      std::string next = got.location;
      if (!next.empty() && next.front() == '/') {
        auto parsed = parse_http_url(url);
        if (!parsed.ok()) return parsed.status();
        next = parsed.value().origin + next;
      }
      if (next.compare(0, target.size(), target) == 0 &&
          (next.size() == target.size() || next[target.size()] == '?')) {
        return next;
      }
      url = std::move(next);
    }
    return Status::unavailable("the authorization at " + shown(authorization_url) +
                               " redirected more than " + std::to_string(kMaxAuthorizeRedirects) +
                               " times without reaching the redirect URI");
  };
}

}  // namespace toolmux
