// Header lookups on a request as cpp-httplib parsed it (transports/http_headers.h):
// the same answers as cpp-httplib's own lookups.
#include "transports/http_headers.h"

#include <catch2/catch.hpp>

using namespace toolmux;

TEST_CASE("a header is found whatever its case, the first of repeated fields first") {
  httplib::Request req;
  req.headers.emplace("Host", "127.0.0.1:8080");
  req.headers.emplace("Origin", "http://a.example");
  req.headers.emplace("origin", "http://b.example");
  req.headers.emplace("MCP-Protocol-Version", "2025-11-25");
  req.headers.emplace("Content-Length", "");

  for (const char* name : {"Host", "HOST", "origin", "mcp-protocol-version", "Content-Length",
                           "Accept", "Hos", "Hosts", "X-Host"}) {
    INFO(name);
    CHECK(http_headers::value(req.headers, name) == req.get_header_value(name));
    CHECK(http_headers::has(req.headers, name) == req.has_header(name));
    CHECK(http_headers::count(req.headers, name) == req.get_header_value_count(name));
  }
  CHECK(http_headers::value(req.headers, "ORIGIN") == "http://a.example");
  CHECK(http_headers::count(req.headers, "Origin") == 2);
  // Present and empty is not absent.
  CHECK(http_headers::has(req.headers, "content-length"));
  CHECK(http_headers::find(req.headers, "Accept") == nullptr);
}
