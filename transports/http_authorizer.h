// What an HTTP client transport asks of whoever holds its credentials: the
// Authorization header to send, and what to do when the server refuses it
// (401, or 403 with a Bearer challenge). transports/oauth_client.h is the
// implementation for MCP authorization; HttpClientTransport
// (transports/http_client_transport.h) calls it.
//
// Both methods may be called from any thread, concurrently; challenged() may
// take as long as an authorization does (network round trips), and callers
// hold no locks while it runs.
#pragma once

#include <string>

#include "src/base/status.h"

namespace toolmux {

class HttpAuthorizer {
 public:
  virtual ~HttpAuthorizer() = default;

  // The value of the Authorization header for the next request ("Bearer
  // ..."), or "" to send none.
  virtual std::string authorization() = 0;

  // The server answered `status` (401 or 403) with `www_authenticate` (the
  // header's value, "" when absent) to a request that carried `sent` (what
  // authorization() gave for it). ok: send the request again with
  // authorization(). Otherwise the request fails with this Status, whose
  // message says why (it never holds a token or secret).
  virtual Status challenged(int status, const std::string& www_authenticate,
                            const std::string& sent) = 0;
};

}  // namespace toolmux
