// The http:// and https:// URLs of upstream MCP servers, taken apart for
// HttpClientTransport: where to connect, what to ask for, what may be shown.
//
// parse_http_url() is a pure function, safe from any thread. It accepts
// scheme://[user[:password]@]host[:port][/path][?query][#fragment], the scheme
// in any case, the host a name, an IPv4 address or a [bracketed] IPv6 address;
// the fragment is dropped. Anything else is refused with a sentence naming
// what is wrong, never an exception.
#pragma once

#include <string>
#include <string_view>

#include "src/base/status.h"

namespace toolmux {

struct HttpUrl {
  std::string origin;    // scheme://host:port (the port always given), what a client connects to
  std::string path;      // path and query ("/" when the URL has no path), what requests ask for
  std::string shown;     // scheme://host[:port]/path: no credentials, no query, safe in messages
  std::string user;      // percent-decoded; empty when the URL has none
  std::string password;  // percent-decoded; empty when the URL has none
};

// The parts of `url`, or an invalid_argument Status saying why it is not an
// http:// or https:// URL toolmux can use.
Result<HttpUrl> parse_http_url(std::string_view url);

}  // namespace toolmux
