#include "transports/oauth_resource.h"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include <httplib.h>
#include <jansson.h>
// libjose's headers declare no C++ linkage of their own.
extern "C" {
#include <jose/jose.h>
#include <jose/openssl.h>
}
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

#include "src/base/base64.h"
#include "src/base/shared_library.h"
#include "src/base/untrusted_json.h"
#include "transports/url.h"

namespace toolmux {
namespace {

using Clock = std::chrono::system_clock;
using Steady = std::chrono::steady_clock;

// An issuer's public key: libjose read the JWK (n and e, or x, y and crv)
// into an OpenSSL key once, when the JWKS was fetched; every thread checking
// a token verifies with it (an EVP_PKEY is only read by a verification).
struct JoseKey {
  EVP_PKEY* pkey = nullptr;
  std::string kty;
  std::string crv;
  std::string alg;  // the key's own "alg", if it names one
  explicit JoseKey(EVP_PKEY* key) : pkey(key) {}
  ~JoseKey() { EVP_PKEY_free(pkey); }
  JoseKey(const JoseKey&) = delete;
  JoseKey& operator=(const JoseKey&) = delete;
};

// Whether `signature` (a JWS signature's bytes, RFC 7518 section 3) is
// `alg`'s signature of `input` by `key`, whose type key_fits() checked:
// RS* PKCS #1 v1.5, PS* PSS (salt as long as the hash, MGF1 with it), ES*
// ECDSA whose r and s, each as long as the curve's order, OpenSSL is given
// in its DER form.
bool signature_verifies(const JoseKey& key, std::string_view alg, std::string_view input,
                        std::string_view signature) {
  const EVP_MD* md = alg.substr(2) == "256"   ? EVP_sha256()
                     : alg.substr(2) == "384" ? EVP_sha384()
                                              : EVP_sha512();
  std::string der;
  if (alg.front() == 'E') {
    const std::size_t half = alg == "ES256" ? 32 : alg == "ES384" ? 48 : 66;
    if (signature.size() != 2 * half) return false;
    const auto* bytes = reinterpret_cast<const unsigned char*>(signature.data());
    ECDSA_SIG* pair = ECDSA_SIG_new();
    if (pair == nullptr) return false;
    BIGNUM* r = BN_bin2bn(bytes, static_cast<int>(half), nullptr);
    BIGNUM* s = BN_bin2bn(bytes + half, static_cast<int>(half), nullptr);
    if (r == nullptr || s == nullptr || ECDSA_SIG_set0(pair, r, s) != 1) {
      BN_free(r);
      BN_free(s);
      ECDSA_SIG_free(pair);
      return false;
    }
    const int size = i2d_ECDSA_SIG(pair, nullptr);
    if (size > 0) {
      der.resize(static_cast<std::size_t>(size));
      auto* out = reinterpret_cast<unsigned char*>(der.data());
      i2d_ECDSA_SIG(pair, &out);
    }
    ECDSA_SIG_free(pair);
    if (der.empty()) return false;
    signature = der;
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx == nullptr) return false;
  EVP_PKEY_CTX* pctx = nullptr;
  bool ok = EVP_DigestVerifyInit(ctx, &pctx, md, nullptr, key.pkey) == 1;
  if (ok && alg.front() == 'P') {
    ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1 &&
         EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, md) == 1;
  }
  ok = ok && EVP_DigestVerify(
                 ctx, reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                 reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  ERR_clear_error();  // a failed check leaves OpenSSL's error queue to this thread
  return ok;
}

bool loopback_host(std::string_view origin) {
  // origin is scheme://host:port (parse_http_url always gives the port).
  const auto scheme_end = origin.find("://");
  std::string_view rest = origin.substr(scheme_end + 3);
  const auto colon = rest.rfind(':');
  std::string_view host = rest.substr(0, colon);
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

Status check_url(std::string_view what, const std::string& url) {
  auto parsed = parse_http_url(url);
  if (!parsed.ok())
    return Status::invalid_argument(std::string(what) + ": " + parsed.status().message());
  const bool https = parsed->origin.rfind("https://", 0) == 0;
  if (!https && !loopback_host(parsed->origin)) {
    return Status::invalid_argument(std::string(what) + " \"" + parsed->shown +
                                    "\" must be https:// (http:// only on a loopback address)");
  }
  if (!parsed->user.empty() || !parsed->password.empty()) {
    return Status::invalid_argument(std::string(what) + " \"" + parsed->shown +
                                    "\" may not carry credentials");
  }
  return Status::ok_status();
}

bool asymmetric_algorithm(std::string_view alg) {
  static const std::vector<std::string_view> kKnown = {"RS256", "RS384", "RS512", "PS256", "PS384",
                                                       "PS512", "ES256", "ES384", "ES512"};
  return std::find(kKnown.begin(), kKnown.end(), alg) != kKnown.end();
}

// Whether `key` may check a signature made with `alg`.
bool key_fits(const JoseKey& key, std::string_view alg) {
  if (!key.alg.empty() && key.alg != alg) return false;
  if (alg.front() == 'R' || alg.front() == 'P') return key.kty == "RSA";
  if (alg == "ES256") return key.kty == "EC" && key.crv == "P-256";
  if (alg == "ES384") return key.kty == "EC" && key.crv == "P-384";
  if (alg == "ES512") return key.kty == "EC" && key.crv == "P-521";
  return false;
}

std::optional<nlohmann::json> decode_part(std::string_view part) {
  auto bytes = base64url_decode(part);
  if (!bytes) return std::nullopt;
  JsonLimits limits;
  limits.max_depth = 16;
  limits.hard_depth = 32;
  limits.max_values = 4096;
  ParsedJson parsed = parse_untrusted_json(*bytes, limits);
  if (parsed.syntax_error || !parsed.violations.empty() || !parsed.value.is_object()) {
    return std::nullopt;
  }
  return std::move(parsed.value);
}

std::vector<std::string> scopes_of(const nlohmann::json& claims) {
  std::vector<std::string> out;
  auto add_words = [&](const std::string& text) {
    std::size_t at = 0;
    while (at < text.size() && out.size() < 256) {
      const auto end = text.find(' ', at);
      std::string word = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (!word.empty()) out.push_back(std::move(word));
      if (end == std::string::npos) break;
      at = end + 1;
    }
  };
  for (const char* name : {"scope", "scp"}) {
    auto it = claims.find(name);
    if (it == claims.end()) continue;
    if (it->is_string()) add_words(it->get<std::string>());
    if (it->is_array()) {
      for (const auto& item : *it) {
        if (item.is_string() && out.size() < 256) out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

Status refused(std::string why) { return Status::invalid_argument(std::move(why)); }

void silence(void*, const char*, int, uint64_t, const char*, va_list) {}

// What toolmux calls of libjose (and of jansson, which it brings), taken
// from it when keys are first read (src/base/shared_library.h): a process
// that checks no JWT never loads either, nor runs libjose's constructor,
// which seeds OpenSSL's random generator (a third of toolmux's start-up).
struct LibJose {
  decltype(&::jose_cfg) jose_cfg = nullptr;
  decltype(&::jose_cfg_set_err_func) jose_cfg_set_err_func = nullptr;
  decltype(&::jose_openssl_jwk_to_EVP_PKEY) jose_openssl_jwk_to_EVP_PKEY = nullptr;
  decltype(&::json_loadb) json_loadb = nullptr;
  decltype(&::json_delete) json_delete = nullptr;
  jose_cfg_t* cfg = nullptr;  // errors silenced; one for the process, never freed
};

const Result<LibJose>& load_libjose() {
  static const Result<LibJose> loaded = []() -> Result<LibJose> {
    auto library =
        SharedLibrary::open("libjose.so.0", "checking the signatures of access tokens", "libjose0");
    if (!library.ok()) return library.status();
    LibJose lib;
    for (Status bound :
         {library->bind(lib.jose_cfg, "jose_cfg"),
          library->bind(lib.jose_cfg_set_err_func, "jose_cfg_set_err_func"),
          library->bind(lib.jose_openssl_jwk_to_EVP_PKEY, "jose_openssl_jwk_to_EVP_PKEY"),
          library->bind(lib.json_loadb, "json_loadb"),
          library->bind(lib.json_delete, "json_delete")}) {
      if (!bound.ok()) return bound;
    }
    lib.cfg = lib.jose_cfg();
    if (lib.cfg != nullptr) lib.jose_cfg_set_err_func(lib.cfg, silence, nullptr);
    return lib;
  }();
  return loaded;
}

// GET (or POST `form`) `url` and read its body as a JSON object of at most
// `max_bytes`; unavailable saying why when that cannot be done.
Result<nlohmann::json> fetch_json(const std::string& url, const OAuthResourceOptions& options,
                                  const std::string* form = nullptr,
                                  const std::pair<std::string, std::string>* basic = nullptr) {
  auto parsed = parse_http_url(url);
  if (!parsed.ok()) return Status::unavailable("bad URL " + url);
  httplib::Client client(parsed->origin);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(options.fetch_timeout);
  client.set_connection_timeout(seconds);
  client.set_read_timeout(seconds);
  client.set_write_timeout(seconds);
  client.set_follow_location(false);
  if (basic != nullptr) client.set_basic_auth(basic->first, basic->second);
  std::string body;
  bool too_large = false;
  auto receive = [&](const char* data, std::size_t size) {
    if (body.size() + size > options.max_document_bytes) {
      too_large = true;
      return false;
    }
    body.append(data, size);
    return true;
  };
  httplib::Result result{nullptr, httplib::Error::Unknown};
  if (form == nullptr) {
    result = client.Get(parsed->path, httplib::Headers{{"Accept", "application/json"}}, receive);
  } else {
    httplib::Request req;
    req.method = "POST";
    req.path = parsed->path;
    req.headers = {{"Accept", "application/json"}};
    req.body = *form;
    req.set_header("Content-Type", "application/x-www-form-urlencoded");
    req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
      return receive(data, size);
    };
    if (basic != nullptr) {
      req.set_header("Authorization", "Basic " + base64_encode(basic->first + ":" + basic->second));
    }
    result = client.send(req);
  }
  if (too_large) return Status::unavailable(parsed->shown + " answered more than the bound");
  if (!result)
    return Status::unavailable(parsed->shown +
                               " did not answer: " + httplib::to_string(result.error()));
  if (result->status != 200) {
    return Status::unavailable(parsed->shown + " answered HTTP " + std::to_string(result->status));
  }
  JsonLimits limits;
  limits.max_depth = 16;
  limits.hard_depth = 32;
  limits.max_values = 100000;
  ParsedJson doc = parse_untrusted_json(body, limits);
  if (doc.syntax_error || !doc.value.is_object()) {
    return Status::unavailable(parsed->shown + " did not answer a JSON object");
  }
  return std::move(doc.value);
}

std::string form_escape(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace

Status check_oauth_resource_options(const OAuthResourceOptions& options) {
  if (options.issuers.empty())
    return Status::invalid_argument("no authorization server (--auth-issuer) is named");
  if (options.resource.empty()) {
    return Status::invalid_argument(
        "the resource URL (--resource-url) is not set: tokens must name it as their audience");
  }
  for (const auto& issuer : options.issuers) {
    if (Status s = check_url("the issuer", issuer); !s.ok()) return s;
  }
  if (Status s = check_url("the resource URL", options.resource); !s.ok()) return s;
  if (options.resource.find('#') != std::string::npos) {
    return Status::invalid_argument("the resource URL may not have a fragment (RFC 8707)");
  }
  if (options.algorithms.empty())
    return Status::invalid_argument("no signature algorithm is allowed");
  for (const auto& alg : options.algorithms) {
    if (!asymmetric_algorithm(alg)) {
      return Status::invalid_argument("signature algorithm \"" + alg +
                                      "\" is not taken: only RS*, PS* and ES* (asymmetric) are");
    }
  }
  return Status::ok_status();
}

std::string protected_resource_metadata_url(std::string_view resource) {
  auto parsed = parse_http_url(resource);
  if (!parsed.ok()) return {};
  std::string path = parsed->path;
  if (const auto q = path.find('?'); q != std::string::npos) path.resize(q);
  if (path == "/") path.clear();
  // The origin as written (without a default port added).
  const std::string shown = parsed->shown;
  const auto scheme_end = shown.find("://");
  const auto host_end = shown.find('/', scheme_end + 3);
  const std::string origin = host_end == std::string::npos ? shown : shown.substr(0, host_end);
  return origin + "/.well-known/oauth-protected-resource" + path;
}

struct OAuthResource::State {
  struct Issuer {
    std::string name;
    std::mutex fetching;  // one fetch of metadata or keys at a time
    // Under State::mutex:
    std::string jwks_uri;
    std::string introspection_endpoint;
    std::optional<Steady::time_point> metadata_at;
    std::map<std::string, std::shared_ptr<const JoseKey>> keys;  // by kid ("" when none)
    std::optional<Steady::time_point> keys_at;
    // The last failed fetch of metadata or keys, and why: within
    // key_refetch_interval of it, a token that needs them is answered with
    // the same failure, and nothing is fetched (an issuer that is down is not
    // asked once per request).
    std::optional<Steady::time_point> failed_at;
    Status failure;
  };
  struct Cached {
    AccessGrant grant;
    Clock::time_point until;
  };
  // Under issuer.fetching. Fetches the issuer's metadata when it has none or
  // it is older than metadata_lifetime, then its keys when `keys` asks.
  Status refresh(Issuer& issuer, const OAuthResourceOptions& options, bool keys);
  Status fetch(Issuer& issuer, const OAuthResourceOptions& options, bool keys);

  std::mutex mutex;
  std::vector<std::unique_ptr<Issuer>> issuers;
  std::unordered_map<std::string, Cached> grants;  // by the token's SHA-256
  Stats stats;
};

OAuthResource::OAuthResource(OAuthResourceOptions options)
    : options_(std::move(options)),
      metadata_url_(protected_resource_metadata_url(options_.resource)),
      state_(std::make_unique<State>()) {
  for (const auto& name : options_.issuers) {
    auto issuer = std::make_unique<State::Issuer>();
    issuer->name = name;
    state_->issuers.push_back(std::move(issuer));
  }
}

OAuthResource::~OAuthResource() = default;

std::string OAuthResource::metadata_path() const {
  const auto scheme_end = metadata_url_.find("://");
  const auto host_end = metadata_url_.find('/', scheme_end + 3);
  return metadata_url_.substr(host_end);
}

nlohmann::json OAuthResource::metadata() const {
  nlohmann::json doc = {{"resource", options_.resource},
                        {"authorization_servers", options_.issuers},
                        {"bearer_methods_supported", {"header"}},
                        {"resource_signing_alg_values_supported", options_.algorithms},
                        {"resource_name", "toolmux"}};
  if (!options_.scopes_supported.empty()) doc["scopes_supported"] = options_.scopes_supported;
  return doc;
}

OAuthResource::Stats OAuthResource::stats() const {
  std::lock_guard lock(state_->mutex);
  Stats out = state_->stats;
  out.cached_grants = state_->grants.size();
  return out;
}

namespace {

// The metadata URLs to try for `issuer`, in order: RFC 8414's, then OpenID
// discovery's (path inserted, then appended).
std::vector<std::string> metadata_urls(const std::string& issuer) {
  const auto scheme_end = issuer.find("://");
  const auto host_end = issuer.find('/', scheme_end + 3);
  const std::string origin = host_end == std::string::npos ? issuer : issuer.substr(0, host_end);
  std::string path = host_end == std::string::npos ? "" : issuer.substr(host_end);
  while (!path.empty() && path.back() == '/') path.pop_back();
  return {origin + "/.well-known/oauth-authorization-server" + path,
          origin + "/.well-known/openid-configuration" + path,
          origin + path + "/.well-known/openid-configuration"};
}

}  // namespace

Status OAuthResource::State::refresh(Issuer& issuer, const OAuthResourceOptions& options,
                                     bool keys) {
  Status done = fetch(issuer, options, keys);
  std::lock_guard lock(mutex);
  if (done.ok()) {
    issuer.failed_at.reset();
  } else if (!issuer.failed_at || issuer.failure.message() != done.message()) {
    issuer.failed_at = Steady::now();
    issuer.failure = done;
  }
  return done;
}

Status OAuthResource::State::fetch(Issuer& issuer, const OAuthResourceOptions& options, bool keys) {
  State& state = *this;
  bool need_metadata = false;
  std::string jwks_uri;
  {
    std::lock_guard lock(state.mutex);
    if (issuer.failed_at && Steady::now() - *issuer.failed_at < options.key_refetch_interval) {
      return issuer.failure;
    }
    need_metadata =
        !issuer.metadata_at || Steady::now() - *issuer.metadata_at > options.metadata_lifetime;
    jwks_uri = issuer.jwks_uri;
  }
  if (need_metadata) {
    std::string last_error;
    std::optional<nlohmann::json> found;
    for (const auto& url : metadata_urls(issuer.name)) {
      {
        std::lock_guard lock(state.mutex);
        ++state.stats.metadata_fetches;
      }
      auto doc = fetch_json(url, options);
      if (!doc.ok()) {
        last_error = doc.status().message();
        continue;
      }
      found = std::move(doc.value());
      break;
    }
    if (!found)
      return Status::unavailable("the authorization server's metadata could not be read: " +
                                 last_error);
    const auto iss = found->find("issuer");
    if (iss == found->end() || !iss->is_string() || iss->get<std::string>() != issuer.name) {
      return Status::unavailable("the authorization server's metadata names another issuer");
    }
    std::string new_jwks;
    std::string introspection;
    if (auto it = found->find("jwks_uri"); it != found->end() && it->is_string()) new_jwks = *it;
    if (auto it = found->find("introspection_endpoint"); it != found->end() && it->is_string()) {
      introspection = *it;
    }
    if (!new_jwks.empty() && !check_url("jwks_uri", new_jwks).ok()) new_jwks.clear();
    if (!introspection.empty() && !check_url("introspection_endpoint", introspection).ok()) {
      introspection.clear();
    }
    std::lock_guard lock(state.mutex);
    issuer.jwks_uri = new_jwks;
    issuer.introspection_endpoint = introspection;
    issuer.metadata_at = Steady::now();
    jwks_uri = new_jwks;
  }
  if (!keys) return Status::ok_status();
  if (jwks_uri.empty())
    return Status::unavailable("the authorization server publishes no jwks_uri");
  {
    std::lock_guard lock(state.mutex);
    ++state.stats.key_fetches;
    issuer.keys_at = Steady::now();  // a failed fetch counts too: the rate bound holds
  }
  auto doc = fetch_json(jwks_uri, options);
  if (!doc.ok())
    return Status::unavailable("the authorization server's keys could not be read: " +
                               doc.status().message());
  const auto list = doc->find("keys");
  if (list == doc->end() || !list->is_array())
    return Status::unavailable("the authorization server's JWKS has no keys");
  const Result<LibJose>& jose = load_libjose();
  if (!jose.ok()) return jose.status();
  std::map<std::string, std::shared_ptr<const JoseKey>> fresh;
  for (const auto& entry : *list) {
    if (fresh.size() >= 64) break;
    if (!entry.is_object()) continue;
    auto text_of = [&](const char* name) {
      auto it = entry.find(name);
      return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string use = text_of("use");
    if (!use.empty() && use != "sig") continue;
    if (entry.contains("d")) continue;  // a private key published by mistake: never used
    const std::string kty = text_of("kty");
    if (kty != "RSA" && kty != "EC") continue;
    const std::string text = entry.dump();
    json_t* jwk = jose->json_loadb(text.data(), text.size(), 0, nullptr);
    if (jwk == nullptr) continue;
    EVP_PKEY* pkey = jose->jose_openssl_jwk_to_EVP_PKEY(jose->cfg, jwk);
    // The only reference (libjose keeps none): json_decref's work, which
    // would name jansson's json_delete at link time.
    jose->json_delete(jwk);
    if (pkey == nullptr) continue;
    // RSA keys under 2048 bits are too weak to take a signature from (RFC 7518 section 3.3).
    if (kty == "RSA" && EVP_PKEY_get_bits(pkey) < 2048) {
      EVP_PKEY_free(pkey);
      continue;
    }
    auto key = std::make_shared<JoseKey>(pkey);
    key->kty = kty;
    key->crv = text_of("crv");
    key->alg = text_of("alg");
    fresh.emplace(text_of("kid"), std::move(key));
  }
  std::lock_guard lock(state.mutex);
  issuer.keys = std::move(fresh);
  return Status::ok_status();
}

Result<AccessGrant> OAuthResource::verify(std::string_view token) {
  if (token.empty()) return refused("the bearer token is empty");
  if (token.size() > options_.max_token_bytes) return refused("the bearer token is too long");
  for (char c : token) {
    if (c <= ' ' || c > '~')
      return refused("the bearer token holds characters a token cannot have");
  }
  // The cache's key: the token's SHA-256 (a token is not kept), by OpenSSL,
  // whose SHA-256 uses the processor's instructions for it where there are
  // some: a fifth of the portable one's cost on a long token, paid per request.
  std::string digest(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
         reinterpret_cast<unsigned char*>(digest.data()));
  const auto now = Clock::now();
  {
    std::lock_guard lock(state_->mutex);
    if (auto it = state_->grants.find(digest); it != state_->grants.end()) {
      if (it->second.until > now) return it->second.grant;
      state_->grants.erase(it);
    }
  }
  auto remember = [&](const AccessGrant& grant, std::chrono::seconds lifetime) {
    std::lock_guard lock(state_->mutex);
    if (state_->grants.size() >= options_.max_cached_grants) {
      for (auto it = state_->grants.begin(); it != state_->grants.end();) {
        it = it->second.until <= now ? state_->grants.erase(it) : std::next(it);
      }
      if (state_->grants.size() >= options_.max_cached_grants) state_->grants.clear();
    }
    state_->grants[digest] = {grant, std::min(grant.expires, now + lifetime)};
  };

  const auto first_dot = token.find('.');
  const auto second_dot =
      first_dot == std::string_view::npos ? first_dot : token.find('.', first_dot + 1);
  if (first_dot == std::string_view::npos) {
    // Opaque: introspection (RFC 7662).
    if (options_.introspection_client_id.empty()) {
      return refused("the bearer token is not a JWT, and this server does not introspect tokens");
    }
    Status last = Status::unavailable("no authorization server offers introspection");
    for (auto& issuer : state_->issuers) {
      std::string endpoint;
      {
        std::lock_guard fetch(issuer->fetching);
        if (Status s = state_->refresh(*issuer, options_, false); !s.ok()) {
          last = s;
          continue;
        }
        std::lock_guard lock(state_->mutex);
        endpoint = issuer->introspection_endpoint;
      }
      if (endpoint.empty()) continue;
      const std::string form = "token=" + form_escape(token) + "&token_type_hint=access_token";
      const std::pair<std::string, std::string> basic{
          form_escape(options_.introspection_client_id),
          form_escape(options_.introspection_client_secret)};
      {
        std::lock_guard lock(state_->mutex);
        ++state_->stats.introspections;
      }
      auto answer = fetch_json(endpoint, options_, &form, &basic);
      if (!answer.ok()) {
        last = answer.status();
        continue;
      }
      const nlohmann::json& info = *answer;
      if (info.value("active", false) != true) {
        last = refused("the bearer token is not active");
        continue;
      }
      if (auto iss = info.find("iss");
          iss != info.end() && (!iss->is_string() || *iss != issuer->name)) {
        last = refused("the bearer token was issued by another authorization server");
        continue;
      }
      bool for_us = false;
      if (auto aud = info.find("aud"); aud != info.end()) {
        if (aud->is_string()) for_us = *aud == options_.resource;
        if (aud->is_array()) {
          for (const auto& a : *aud) for_us = for_us || (a.is_string() && a == options_.resource);
        }
      }
      if (!for_us)
        return refused("the bearer token is not for this server (its audience does not name it)");
      AccessGrant grant;
      if (auto sub = info.find("sub"); sub != info.end() && sub->is_string()) grant.subject = *sub;
      if (grant.subject.empty()) return refused("the bearer token names no subject");
      grant.issuer = issuer->name;
      grant.scopes = scopes_of(info);
      grant.expires = now + options_.introspection_cache_lifetime;
      if (auto exp = info.find("exp"); exp != info.end() && exp->is_number()) {
        grant.expires = Clock::time_point(std::chrono::seconds(exp->get<std::int64_t>()));
        if (grant.expires + options_.clock_skew <= now)
          return refused("the bearer token has expired");
      }
      remember(grant, options_.introspection_cache_lifetime);
      return grant;
    }
    return last;
  }
  if (second_dot == std::string_view::npos ||
      token.find('.', second_dot + 1) != std::string_view::npos) {
    return refused("the bearer token is malformed: a JWT has three parts");
  }
  const std::string_view header_part = token.substr(0, first_dot);
  const std::string_view payload_part = token.substr(first_dot + 1, second_dot - first_dot - 1);
  const std::string_view signature_part = token.substr(second_dot + 1);
  auto header = decode_part(header_part);
  if (!header) return refused("the bearer token is malformed: its header is not base64url JSON");
  const auto alg_it = header->find("alg");
  if (alg_it == header->end() || !alg_it->is_string())
    return refused("the bearer token's header names no algorithm");
  const std::string alg = *alg_it;
  if (std::find(options_.algorithms.begin(), options_.algorithms.end(), alg) ==
      options_.algorithms.end()) {
    return refused("the bearer token is signed with an algorithm this server does not take");
  }
  if (header->contains("crit"))
    return refused("the bearer token's header has critical extensions this server does not know");
  if (auto typ = header->find("typ"); typ != header->end()) {
    std::string t = typ->is_string() ? typ->get<std::string>() : std::string();
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
    if (t != "jwt" && t != "at+jwt" && t != "application/at+jwt") {
      return refused("the bearer token is not an access token (its typ)");
    }
  }
  std::string kid;
  if (auto k = header->find("kid"); k != header->end()) {
    if (!k->is_string()) return refused("the bearer token's header is malformed (kid)");
    kid = *k;
    if (kid.size() > 256) return refused("the bearer token's header is malformed (kid)");
  }
  auto claims = decode_part(payload_part);
  if (!claims) return refused("the bearer token is malformed: its claims are not base64url JSON");
  const auto iss_it = claims->find("iss");
  State::Issuer* issuer = nullptr;
  if (iss_it != claims->end() && iss_it->is_string()) {
    for (auto& candidate : state_->issuers) {
      if (candidate->name == iss_it->get<std::string>()) issuer = candidate.get();
    }
  }
  if (issuer == nullptr)
    return refused("the bearer token was not issued by an authorization server this server trusts");
  bool for_us = false;
  if (auto aud = claims->find("aud"); aud != claims->end()) {
    if (aud->is_string()) for_us = *aud == options_.resource;
    if (aud->is_array()) {
      for (const auto& a : *aud) for_us = for_us || (a.is_string() && a == options_.resource);
    }
  }
  if (!for_us)
    return refused("the bearer token is not for this server (its audience does not name it)");
  const auto exp_it = claims->find("exp");
  if (exp_it == claims->end() || !exp_it->is_number())
    return refused("the bearer token has no expiry");
  const double exp_seconds = exp_it->get<double>();
  const double now_seconds = std::chrono::duration<double>(now.time_since_epoch()).count();
  const double skew = static_cast<double>(options_.clock_skew.count());
  if (!(exp_seconds + skew > now_seconds)) return refused("the bearer token has expired");
  if (auto nbf = claims->find("nbf"); nbf != claims->end()) {
    if (!nbf->is_number() || nbf->get<double>() - skew > now_seconds) {
      return refused("the bearer token is not valid yet");
    }
  }
  const auto sub_it = claims->find("sub");
  if (sub_it == claims->end() || !sub_it->is_string() || sub_it->get<std::string>().empty()) {
    return refused("the bearer token names no subject");
  }

  // The keys that may have signed it: the issuer's key of that kid, fetched
  // again (at a bounded rate) when it is not known.
  auto candidates = [&]() {
    std::vector<std::shared_ptr<const JoseKey>> out;
    std::lock_guard lock(state_->mutex);
    if (!kid.empty()) {
      if (auto it = issuer->keys.find(kid);
          it != issuer->keys.end() && key_fits(*it->second, alg)) {
        out.push_back(it->second);
      }
      return out;
    }
    for (const auto& [id, key] : issuer->keys) {
      if (key_fits(*key, alg) && out.size() < 8) out.push_back(key);
    }
    return out;
  };
  auto keys = candidates();
  if (keys.empty()) {
    std::lock_guard fetch(issuer->fetching);
    keys = candidates();  // another thread may have fetched them meanwhile
    if (keys.empty()) {
      bool may_fetch = false;
      {
        std::lock_guard lock(state_->mutex);
        if (issuer->failed_at &&
            Steady::now() - *issuer->failed_at < options_.key_refetch_interval) {
          return issuer->failure;
        }
        may_fetch =
            !issuer->keys_at || Steady::now() - *issuer->keys_at >= options_.key_refetch_interval;
      }
      if (may_fetch) {
        if (Status s = state_->refresh(*issuer, options_, true); !s.ok()) return s;
        keys = candidates();
      }
    }
  }
  if (keys.empty())
    return refused("the bearer token is signed with a key this server does not know");

  const auto signature = base64url_decode(signature_part);
  if (!signature) return refused("the bearer token is malformed: its signature is not base64url");
  const std::string_view signed_input = token.substr(0, second_dot);
  bool good = false;
  for (const auto& key : keys) {
    if (signature_verifies(*key, alg, signed_input, *signature)) {
      good = true;
      break;
    }
  }
  if (!good) return refused("the bearer token's signature does not verify");

  AccessGrant grant;
  grant.subject = *sub_it;
  grant.issuer = issuer->name;
  grant.scopes = scopes_of(*claims);
  grant.expires = Clock::time_point(std::chrono::seconds(static_cast<std::int64_t>(exp_seconds)));
  remember(grant, options_.grant_cache_lifetime);
  return grant;
}

}  // namespace toolmux
