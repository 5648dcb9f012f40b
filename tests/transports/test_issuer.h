// An OAuth authorization server for unit tests, as far as a resource server
// sees one: its metadata (RFC 8414 or OpenID discovery), its JWKS and an
// introspection endpoint, over real HTTP on a loopback port; and the tokens it
// would issue, signed by libjose with keys it generated (RS256 and ES256).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <httplib.h>
#include <jansson.h>
// libjose's headers declare no C++ linkage of their own.
extern "C" {
#include <jose/jose.h>
}
#include <nlohmann/json.hpp>

#include "src/base/base64.h"

namespace toolmux::testing {

// A JWK libjose generated, private part included.
inline nlohmann::json generate_jwk(const std::string& alg, const std::string& kid) {
  json_t* jwk = json_pack("{s:s}", "alg", alg.c_str());
  if (!jose_jwk_gen(nullptr, jwk)) throw std::runtime_error("jose_jwk_gen failed");
  char* text = json_dumps(jwk, JSON_COMPACT);
  nlohmann::json out = nlohmann::json::parse(text);
  free(text);  // NOLINT: jansson's allocation
  json_decref(jwk);
  out["kid"] = kid;
  return out;
}

// The public half of a JWK: what a JWKS publishes.
inline nlohmann::json public_jwk(nlohmann::json jwk) {
  for (const char* name : {"d", "p", "q", "dp", "dq", "qi", "oth"}) jwk.erase(name);
  return jwk;
}

// header.payload.signature, signed with `jwk` (its private part).
inline std::string sign_jwt(const nlohmann::json& header, const nlohmann::json& claims,
                            const nlohmann::json& jwk) {
  const std::string payload = base64url_encode(claims.dump());
  json_t* jws = json_pack("{s:s}", "payload", payload.c_str());
  const std::string header_text = header.dump();
  json_t* sig = json_pack("{s:o}", "protected", json_loads(header_text.c_str(), 0, nullptr));
  const std::string key_text = jwk.dump();
  json_t* key = json_loads(key_text.c_str(), 0, nullptr);
  if (!jose_jws_sig(nullptr, jws, sig, key)) throw std::runtime_error("jose_jws_sig failed");
  const std::string protected_part = json_string_value(json_object_get(jws, "protected"));
  const std::string signature = json_string_value(json_object_get(jws, "signature"));
  json_decref(key);
  json_decref(sig);
  json_decref(jws);
  return protected_part + "." + payload + "." + signature;
}

class TestIssuer {
 public:
  // `openid`: metadata only at /.well-known/openid-configuration (else RFC 8414's).
  explicit TestIssuer(bool openid = false) : openid_(openid) {
    rsa_ = generate_jwk("RS256", "rsa-1");
    ec_ = generate_jwk("ES256", "ec-1");
    port_ = server_.bind_to_any_port("127.0.0.1");
    issuer_ = "http://127.0.0.1:" + std::to_string(port_);
    server_.Get(
        openid_ ? "/.well-known/openid-configuration" : "/.well-known/oauth-authorization-server",
        [this](const httplib::Request&, httplib::Response& res) {
          ++metadata_reads;
          nlohmann::json doc = {{"issuer", metadata_issuer.empty() ? issuer_ : metadata_issuer},
                                {"jwks_uri", issuer_ + "/jwks"},
                                {"introspection_endpoint", issuer_ + "/introspect"}};
          res.set_content(doc.dump(), "application/json");
        });
    server_.Get("/jwks", [this](const httplib::Request&, httplib::Response& res) {
      ++jwks_reads;
      std::lock_guard lock(mutex_);
      nlohmann::json keys = nlohmann::json::array({public_jwk(rsa_), public_jwk(ec_)});
      for (const auto& extra : extra_keys_) keys.push_back(public_jwk(extra));
      res.set_content(nlohmann::json{{"keys", keys}}.dump(), "application/json");
    });
    server_.Post("/introspect", [this](const httplib::Request& req, httplib::Response& res) {
      ++introspections;
      if (req.get_header_value("Authorization") !=
          "Basic " + base64_encode("toolmux:introspection-secret")) {
        res.status = 401;
        return;
      }
      std::lock_guard lock(mutex_);
      const std::string token = req.get_param_value("token");
      auto it = opaque_.find(token);
      res.set_content(it == opaque_.end() ? R"({"active":false})" : it->second.dump(),
                      "application/json");
    });
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~TestIssuer() {
    server_.stop();
    thread_.join();
  }
  TestIssuer(const TestIssuer&) = delete;
  TestIssuer& operator=(const TestIssuer&) = delete;

  const std::string& issuer() const { return issuer_; }

  // Claims of a good token for `audience`, valid for an hour.
  nlohmann::json claims(const std::string& audience, const std::string& subject = "alice") const {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    return {{"iss", issuer_}, {"aud", audience},   {"sub", subject},
            {"iat", now},     {"exp", now + 3600}, {"scope", "tools:read tools:write"}};
  }
  std::string rsa_token(const nlohmann::json& claims, std::string kid = "rsa-1") const {
    return sign_jwt({{"alg", "RS256"}, {"typ", "at+jwt"}, {"kid", kid}}, claims, rsa_);
  }
  std::string ec_token(const nlohmann::json& claims) const {
    return sign_jwt({{"alg", "ES256"}, {"typ", "at+jwt"}, {"kid", "ec-1"}}, claims, ec_);
  }
  const nlohmann::json& rsa_key() const { return rsa_; }

  // A key the JWKS publishes from now on (a rotation).
  void publish(const nlohmann::json& jwk) {
    std::lock_guard lock(mutex_);
    extra_keys_.push_back(jwk);
  }
  // An opaque token introspection answers with `info`.
  void opaque(const std::string& token, const nlohmann::json& info) {
    std::lock_guard lock(mutex_);
    opaque_[token] = info;
  }

  std::atomic<int> metadata_reads{0};
  std::atomic<int> jwks_reads{0};
  std::atomic<int> introspections{0};
  std::string metadata_issuer;  // when set, the metadata names this issuer instead

 private:
  bool openid_;
  nlohmann::json rsa_;
  nlohmann::json ec_;
  httplib::Server server_;
  int port_ = 0;
  std::string issuer_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<nlohmann::json> extra_keys_;
  std::map<std::string, nlohmann::json> opaque_;
};

}  // namespace toolmux::testing
