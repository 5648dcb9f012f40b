#include "transports/oauth_rules.h"

#include <algorithm>
#include <cctype>

#include <openssl/sha.h>

#include "src/base/ascii.h"
#include "src/base/base64.h"
#include "src/base/random_id.h"
#include "transports/url.h"

namespace toolmux {
namespace {

// The path of a parsed URL without its query.
std::string path_of(const HttpUrl& url) {
  std::string path = url.path;
  if (const auto q = path.find('?'); q != std::string::npos) path.erase(q);
  return path;
}

// The host of "scheme://host:port", lowercased.
std::string host_of(const HttpUrl& url) {
  const auto start = url.origin.find("://") + 3;
  std::string host = url.origin.substr(start, url.origin.rfind(':') - start);
  return ascii_lower(host);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> form_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string url_authority(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const auto path = url.find_first_of("/?#", scheme_end + 3);
  return std::string(url.substr(0, path));
}

std::string pkce_verifier() { return random_id(32); }

std::string pkce_challenge(std::string_view verifier) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

Result<std::vector<std::string>> protected_resource_metadata_urls(std::string_view server_url) {
  auto url = parse_http_url(server_url);
  if (!url.ok()) return url.status();
  std::string path = path_of(url.value());
  if (path == "/") path.clear();
  std::vector<std::string> urls;
  const std::string root = url_authority(server_url) + "/.well-known/oauth-protected-resource";
  if (!path.empty()) urls.push_back(root + path);
  urls.push_back(root);
  return urls;
}

Result<std::vector<std::string>> authorization_server_metadata_urls(std::string_view issuer) {
  auto url = parse_http_url(issuer);
  if (!url.ok()) return url.status();
  if (url.value().path.find('?') != std::string::npos) {
    return Status::invalid_argument("the authorization server's issuer " + url.value().shown +
                                    " has a query, which an issuer may not have (RFC 8414 §2)");
  }
  std::string path = path_of(url.value());
  while (!path.empty() && path.back() == '/') path.pop_back();
  const std::string origin = url_authority(issuer);
  if (path.empty()) {
    return std::vector<std::string>{origin + "/.well-known/oauth-authorization-server",
                                    origin + "/.well-known/openid-configuration"};
  }
  return std::vector<std::string>{origin + "/.well-known/oauth-authorization-server" + path,
                                  origin + "/.well-known/openid-configuration" + path,
                                  origin + path + "/.well-known/openid-configuration"};
}

bool resource_covers(std::string_view resource, std::string_view server_url) {
  if (resource.find_first_of("?#") != std::string_view::npos) return false;
  auto r = parse_http_url(resource);
  auto s = parse_http_url(server_url);
  if (!r.ok() || !s.ok()) return false;
  if (ascii_lower(r.value().origin) != ascii_lower(s.value().origin)) return false;
  std::string rp = path_of(r.value());
  const std::string sp = path_of(s.value());
  if (rp.empty() || rp == "/") return true;
  if (sp == rp) return true;
  if (rp.back() != '/') rp += '/';
  return sp.compare(0, rp.size(), rp) == 0;
}

Status require_secure_url(std::string_view url, std::string_view what) {
  auto parsed = parse_http_url(url);
  if (!parsed.ok()) {
    return Status::invalid_argument(std::string(what) + ": " + parsed.message());
  }
  if (ascii_lower(parsed.value().origin.substr(0, 8)) == "https://") return Status::ok_status();
  const std::string host = host_of(parsed.value());
  if (host == "localhost" || host == "[::1]" || host.rfind("127.", 0) == 0) {
    return Status::ok_status();
  }
  return Status::invalid_argument(std::string(what) + " " + parsed.value().shown +
                                  " is not https: OAuth over plain http is allowed only to a "
                                  "loopback host");
}

std::vector<std::string> split_scopes(std::string_view scopes) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < scopes.size()) {
    while (i < scopes.size() && scopes[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < scopes.size() && scopes[i] != ' ') ++i;
    if (i > start) out.emplace_back(scopes.substr(start, i - start));
  }
  return out;
}

std::string join_scopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

std::vector<std::string> choose_scopes(std::optional<std::string_view> challenged,
                                       const std::vector<std::string>& resource_scopes,
                                       const std::vector<std::string>& previous,
                                       const std::vector<std::string>& server_scopes) {
  std::vector<std::string> out;
  const auto add = [&out](const std::string& scope) {
    if (std::find(out.begin(), out.end(), scope) == out.end()) out.push_back(scope);
  };
  const std::vector<std::string> base = challenged && !split_scopes(*challenged).empty()
                                            ? split_scopes(*challenged)
                                            : resource_scopes;
  for (const auto& s : previous) add(s);
  for (const auto& s : base) add(s);
  const bool offered = std::find(server_scopes.begin(), server_scopes.end(), "offline_access") !=
                       server_scopes.end();
  if (!out.empty() && offered) add("offline_access");
  return out;
}

std::string form_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~' || c == '*') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0x0f];
    }
  }
  return out;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += form_encode(name) + '=' + form_encode(value);
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> query_params(std::string_view url) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto q = url.find('?');
  if (q == std::string_view::npos) return out;
  std::string_view query = url.substr(q + 1);
  if (const auto hash = query.find('#'); hash != std::string_view::npos) {
    query = query.substr(0, hash);
  }
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    auto name = form_decode(pair.substr(0, eq));
    auto value =
        form_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!name || !value) return std::nullopt;
    const bool seen =
        std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.first == *name; });
    if (!seen) out.emplace_back(std::move(*name), std::move(*value));
  }
  return out;
}

}  // namespace toolmux
