#include "transports/url.h"

#include <algorithm>
#include <cctype>

#include "src/base/ascii.h"

namespace toolmux {

namespace {

std::string percent_decode(std::string_view text) {
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) && hex(text[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

Result<HttpUrl> parse_http_url(std::string_view url) {
  HttpUrl out;
  std::string scheme;
  for (std::string_view s : {"http", "https"}) {
    const std::string prefix = std::string(s) + "://";
    if (url.size() > prefix.size() && ascii_iequals(url.substr(0, prefix.size()), prefix)) {
      scheme = s;
    }
  }
  if (scheme.empty()) {
    return Status::invalid_argument("the upstream URL must start with http:// or https://");
  }
  url.remove_prefix(scheme.size() + 3);
  if (const auto hash = url.find('#'); hash != std::string_view::npos) url = url.substr(0, hash);
  const auto end_of_authority = std::min(url.find('/'), url.find('?'));
  std::string_view authority = url.substr(0, end_of_authority);
  std::string_view rest =
      end_of_authority == std::string_view::npos ? "" : url.substr(end_of_authority);
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    const auto colon = userinfo.find(':');
    out.user = percent_decode(userinfo.substr(0, colon));
    if (colon != std::string_view::npos) out.password = percent_decode(userinfo.substr(colon + 1));
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return Status::invalid_argument("the upstream URL has an unclosed '[' in its host");
    }
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      return Status::invalid_argument("the upstream URL has something after its IPv6 host");
    }
    if (!after.empty()) port = after.substr(1);
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || host.find_first_of(" \t\r\n") != std::string_view::npos) {
    return Status::invalid_argument("the upstream URL has no host");
  }
  int port_number = scheme == "https" ? 443 : 80;
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      return Status::invalid_argument("the upstream URL's port is not a number");
    }
    port_number = std::stoi(std::string(port));
    if (port_number < 1 || port_number > 65535) {
      return Status::invalid_argument("the upstream URL's port is out of range");
    }
  }
  std::string path(rest);
  if (path.empty() || path.front() == '?') path.insert(0, "/");
  if (path.find_first_of(" \t\r\n") != std::string::npos) {
    return Status::invalid_argument(
        "the upstream URL's path has white space in it (percent-encode it)");
  }
  out.origin = scheme + "://" + std::string(host) + ":" + std::to_string(port_number);
  out.path = path;
  out.shown = scheme + "://" + std::string(host) + (port.empty() ? "" : ":" + std::string(port)) +
              path.substr(0, path.find('?'));
  return out;
}

}  // namespace toolmux
