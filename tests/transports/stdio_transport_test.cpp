#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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
  void write_all(const std::string& s) { REQUIRE(written_whole(s)); }
  // For a thread of the test's own: no Catch2 assertion there (they are not
  // thread-safe); the caller checks the result once the thread is joined.
  bool written_whole(const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
      const ssize_t n = ::write(fds[1], s.data() + done, s.size() - done);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
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
  bool sent = false;
  std::thread writer([&] {
    sent = in.written_whole(std::string(200000, 'x').append("\n{\"ok\":true}\n"));
    in.close_write();
  });
  auto first = t.read_line();
  writer.join();
  REQUIRE(sent);
  REQUIRE(first.has_value());
  CHECK(first->oversized);
  CHECK(first->text.empty());
  CHECK(t.read_line()->text == "{\"ok\":true}");
}

TEST_CASE(
    "a backlog of many pipelined lines, one across every read's end, comes out whole and in "
    "order") {
  Pipe in, out;
  StdioTransport t(in.fds[0], out.fds[1], 4096);
  // Lines of varying length, more bytes than one read takes (64 KiB), with an
  // oversized line among them: each comes out as sent, the long one skipped.
  std::vector<std::string> sent;
  std::string stream;
  for (int i = 0; i < 20000; ++i) {
    std::string line = "{\"id\":" + std::to_string(i) + ",\"pad\":\"" +
                       std::string(static_cast<std::size_t>(i % 37), 'p') + "\"}";
    if (i == 7000) line = std::string(5000, 'x');
    sent.push_back(line);
    stream += line + (i % 3 == 0 ? "\r\n" : "\n");
  }
  bool whole = false;
  std::thread writer([&] {
    whole = in.written_whole(stream);
    in.close_write();
  });
  for (int i = 0; i < 20000; ++i) {
    auto line = t.read_line();
    REQUIRE(line.has_value());
    if (i == 7000) {
      REQUIRE(line->oversized);
    } else {
      REQUIRE_FALSE(line->oversized);
      REQUIRE(line->text == sent[static_cast<std::size_t>(i)]);
    }
  }
  CHECK_FALSE(t.read_line().has_value());
  writer.join();
  CHECK(whole);
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

namespace {

// What serve() delivered, in order.
struct RecordingPeer final : toolmux::ServerPeer {
  const std::string& id() const override { return name; }
  bool initialized() const override { return true; }
  void deliver(toolmux::jsonrpc::Message message, toolmux::Carrier carrier) override {
    delivered.push_back(std::move(message));
    carriers.push_back(carrier);
  }
  std::string name = "stdio";
  std::vector<toolmux::jsonrpc::Message> delivered;
  std::vector<toolmux::Carrier> carriers;
};

}  // namespace

TEST_CASE("serve parses each line at the boundary and delivers it to the peer as its reader") {
  using Kind = toolmux::jsonrpc::Message::Kind;
  Pipe in, out;
  StdioTransport t(in.fds[0], out.fds[1], 64);
  in.write_all(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
               "\n  \n{not json\n" +
               std::string(100, 'x') + "\n" + R"({"jsonrpc":"2.0","method":"notifications/x"})");
  in.close_write();
  RecordingPeer peer;
  t.serve(peer, toolmux::JsonLimits{});
  REQUIRE(peer.delivered.size() == 4);  // the blank line is skipped
  CHECK(peer.delivered[0].kind == Kind::request);
  CHECK(peer.delivered[0].method == "ping");
  CHECK(peer.delivered[1].kind == Kind::invalid);
  CHECK(peer.delivered[1].error_code == -32700);
  CHECK(peer.delivered[2].kind == Kind::invalid);
  CHECK(peer.delivered[2].error == "Parse error: message is larger than 64 bytes");
  CHECK(peer.delivered[3].kind == Kind::notification);
  // A parsed line comes from the reader, which may run an instant tool's call
  // itself; a line too large to parse is answered by a hand-off.
  REQUIRE(peer.carriers.size() == 4);
  CHECK(peer.carriers[0] == toolmux::Carrier::reader);
  CHECK(peer.carriers[1] == toolmux::Carrier::reader);
  CHECK(peer.carriers[2] == toolmux::Carrier::hand_off);
  CHECK(peer.carriers[3] == toolmux::Carrier::reader);
}

TEST_CASE("as a sink, the transport writes each message as one line") {
  Pipe in, out;
  StdioTransport t(in.fds[0], out.fds[1], 1024);
  t.send({{"jsonrpc", "2.0"}, {"id", 1}, {"result", nlohmann::json::object()}}, 1);
  char buf[128] = {};
  const ssize_t n = ::read(out.fds[0], buf, sizeof buf);
  CHECK(std::string(buf, static_cast<std::size_t>(n)) ==
        "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}\n");
}

namespace {

// One end of a SOCK_SEQPACKET pair keeps every write apart: one packet each.
struct Packets {
  int fds[2];
  Packets() { REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds) == 0); }
  ~Packets() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  // The next write's bytes (blocks until there is one).
  std::string next() {
    std::string packet(256 * 1024, '\0');
    const ssize_t n = ::recv(fds[0], packet.data(), packet.size(), 0);
    REQUIRE(n >= 0);
    packet.resize(static_cast<std::size_t>(n));
    return packet;
  }
  bool any_waiting() {
    pollfd p{fds[0], POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }
};

// Answers each request on the reader's own thread, as an instant tool's call is.
struct AnsweringPeer final : toolmux::ServerPeer {
  explicit AnsweringPeer(StdioTransport& t) : transport(t) {}
  const std::string& id() const override { return name; }
  bool initialized() const override { return true; }
  void deliver(toolmux::jsonrpc::Message message, toolmux::Carrier) override {
    if (message.kind != toolmux::jsonrpc::Message::Kind::request) return;
    transport.write_line("answer " + message.id.dump());
    if (after_answer) after_answer(message);
  }
  StdioTransport& transport;
  std::string name = "stdio";
  std::function<void(const toolmux::jsonrpc::Message&)> after_answer;
};

std::string request(int id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"ping"})"
         "\n";
}

// A transport reading `in`, writing packets to `out`, answering as the reader.
struct Answering {
  Pipe in;
  Packets out;
  StdioTransport t{in.fds[0], out.fds[1], 1024};
  AnsweringPeer peer{t};
  // Sends `lines`, closes the input and serves them all.
  void serve_all(const std::string& lines) {
    in.write_all(lines);
    in.close_write();
    t.serve(peer, toolmux::JsonLimits{});
  }
};

}  // namespace

TEST_CASE("answers to pipelined lines go out in one write, in order, before the next read") {
  Answering a;
  Pipe& in = a.in;
  Packets& out = a.out;
  StdioTransport& t = a.t;
  AnsweringPeer& peer = a.peer;
  // Three requests in one read, and a notification that gets no answer last.
  in.write_all(request(1) + request(2) + request(3) +
               R"({"jsonrpc":"2.0","method":"notifications/x"})"
               "\n");
  std::thread reader([&] { t.serve(peer, toolmux::JsonLimits{}); });
  CHECK(out.next() == "answer 1\nanswer 2\nanswer 3\n");
  // The reader now waits for input, with nothing kept back: a client that
  // waits for each answer gets it at once.
  in.write_all(request(4));
  CHECK(out.next() == "answer 4\n");
  in.write_all(request(5));
  CHECK(out.next() == "answer 5\n");
  in.close_write();
  reader.join();
  CHECK_FALSE(out.any_waiting());
}

TEST_CASE("a line another thread writes goes out after what the reader kept, in one write") {
  Answering a;
  // While the reader keeps its answer to 1, a call thread writes: both go out
  // in the order they were written; the reader's answer to 2 follows.
  a.peer.after_answer = [&a](const toolmux::jsonrpc::Message& m) {
    if (m.id == 1) std::thread([&a] { a.t.write_line("progress"); }).join();
  };
  a.serve_all(request(1) + request(2));
  CHECK(a.out.next() == "answer 1\nprogress\n");
  CHECK(a.out.next() == "answer 2\n");
  CHECK_FALSE(a.out.any_waiting());
}

TEST_CASE("what the reader keeps is written once it reaches the bound") {
  Answering a;
  // Each answer is followed by a 33 KiB line: the second pair passes 64 KiB.
  const std::string pad(33 * 1024, 'p');
  a.peer.after_answer = [&a, &pad](const toolmux::jsonrpc::Message&) { a.t.write_line(pad); };
  a.serve_all(request(1) + request(2) + request(3));
  CHECK(a.out.next() == "answer 1\n" + pad + "\nanswer 2\n" + pad + "\n");
  // The last line's answers: nothing left to wait for, each at once.
  CHECK(a.out.next() == "answer 3\n");
  CHECK(a.out.next() == pad + "\n");
  CHECK_FALSE(a.out.any_waiting());
}
