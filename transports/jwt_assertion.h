// A signed JWT client assertion (RFC 7523 §2.2, private_key_jwt): how an
// upstream's OAuth client proves who it is to a token endpoint with a private
// key instead of a shared secret. Signing is OpenSSL's; this file only lays
// out the JWS compact form (RFC 7515) around it.
//
// sign_client_assertion() is safe from any thread. Its errors name what was
// wrong (the key would not load, the algorithm does not fit it); the key never
// appears in them.
#pragma once

#include <chrono>
#include <string>

#include "src/base/status.h"

namespace toolmux {

struct ClientAssertionClaims {
  std::string client_id;  // iss and sub
  std::string audience;   // aud: the authorization server's issuer
  std::chrono::seconds lifetime{300};
};

// A JWT signed with `private_key_pem` (PKCS#8 or traditional PEM) by
// `algorithm`: ES256 (P-256), ES384 (P-384) or RS256 (RSA). Its claims: iss,
// sub, aud, iat, exp and a random jti.
Result<std::string> sign_client_assertion(const ClientAssertionClaims& claims,
                                          const std::string& private_key_pem,
                                          const std::string& algorithm);

}  // namespace toolmux
