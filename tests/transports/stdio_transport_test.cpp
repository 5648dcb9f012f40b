#include <catch2/catch.hpp>

#include <unistd.h>
#include <string>
#include <thread>

#include "transports/stdio_transport.h"

using toolmux::StdioTransport;

namespace {

struct Pipe {
  int fds[2];
  Pipe() { REQUIRE(::pipe(fds) == 0); }
  ~Pipe() {
    ::close(fds[0]);
    if (fds[1] >= 0) ::close(fds[1]);
  }
  void write_all(const std::string& s) {
    REQUIRE(::write(fds[1], s.data(), s.size()) == static_cast<ssize_t>(s.size()));
  }
  void close_write() {
    ::close(fds[1]);
    fds[1] = -1;
  }
};

}  // namespace

TEST_CASE("lines are split on newlines, CRLF is accepted, and EOF ends the stream") {
  Pipe in, out;
  StdioTransport t(in.fds[0], out.fds[1], 1024);
  in.write_all("{\"a\":1}\n{\"b\":2}\r\nlast-without-newline");
  in.close_write();
  CHECK(t.read_line()->text == "{\"a\":1}");
  CHECK(t.read_line()->text == "{\"b\":2}");
  CHECK(t.read_line()->text == "last-without-newline");
  CHECK_FALSE(t.read_line().has_value());
}

TEST_CASE("an oversized line is skipped whole and the next line is read normally") {
  Pipe in, out;
  StdioTransport t(in.fds[0], out.fds[1], 1024);
  // More than a pipe holds: write from another thread while the transport reads.
  std::thread writer([&] {
    in.write_all(std::string(200000, 'x') + "\n{\"ok\":true}\n");
    in.close_write();
  });
  auto first = t.read_line();
  writer.join();
  REQUIRE(first.has_value());
  CHECK(first->oversized);
  CHECK(first->text.empty());
  CHECK(t.read_line()->text == "{\"ok\":true}");
}

TEST_CASE("written messages end with one newline each") {
  Pipe in, out;
  StdioTransport t(in.fds[0], out.fds[1], 1024);
  CHECK(t.write_line("{\"x\":1}"));
  CHECK(t.write_line("{\"y\":2}"));
  char buf[64] = {};
  const ssize_t n = ::read(out.fds[0], buf, sizeof buf);
  CHECK(std::string(buf, static_cast<std::size_t>(n)) == "{\"x\":1}\n{\"y\":2}\n");
}
