// What reading one JSON-RPC message costs, three ways (issue 30): toolmux's
// own reader, which builds the whole message as a tree and takes the envelope
// from it (jsonrpc::read_full_message, the only way before); nlohmann's SAX
// parser with a handler that keeps the envelope's scalars and builds only the
// params subtree; and jsonrpc::parse_message as it is now, which takes the
// fast way, simdjson's On-Demand API (src/base/plain_message.cpp), for a
// message that breaks no rule.
//
// The job, for each: check the whole text is JSON, take "jsonrpc", "id" and
// "method" from the envelope, and build "params" as a tree (the stage after
// reads a tool's name and hands its arguments to the schema check, which
// needs a tree), noticing a repeated key, nesting past the limit and too many
// values. None of the messages here breaks a rule.
//
// Messages: a bare tools/call (the stdio benchmark's), one with twelve
// arguments of every type and a _meta, and a write of 64 KiB of text. Each is
// read in --reps batches of --count (a hundredth of it for the 64 KiB one);
// the figure is the median batch's ns per message. The three readings must
// agree, or it stops. Prints a table and one JSON line ({"bench":"envelope").
//
// Usage: envelope [--count N] [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/jsonrpc.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Envelope {
  std::string jsonrpc;
  json id;
  std::string method;
  json params;
};

// --- nlohmann SAX: the envelope's scalars kept, params built as a subtree ---

class EnvelopeSax : public nlohmann::json_sax<json> {
 public:
  explicit EnvelopeSax(Envelope& out) : out_(out) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool string(string_t& v) override {
    if (depth_ == 1 && key_ == "jsonrpc") {
      out_.jsonrpc = std::move(v);
      return count();
    }
    if (depth_ == 1 && key_ == "method") {
      out_.method = std::move(v);
      return count();
    }
    return scalar(std::move(v));
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      // The envelope's keys: a repeat would go to the full reader.
      if (std::find(top_keys_.begin(), top_keys_.end(), k) != top_keys_.end()) return false;
      top_keys_.push_back(k);
      key_ = std::move(k);
      return true;
    }
    if (!stack_.empty()) {
      json& object = *stack_.back();
      if (object.contains(k)) return false;  // a repeated key
      pending_ = &object[k];
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool count() { return ++values_ <= 1'000'000; }

  template <typename V>
  bool scalar(V&& v) {
    if (!count()) return false;
    if (depth_ == 1) {
      if (key_ == "id") out_.id = std::forward<V>(v);
      return true;  // other top-level scalars are read and dropped
    }
    if (stack_.empty()) return true;
    place(json(std::forward<V>(v)));
    return true;
  }

  void place(json&& v) {
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
    } else {
      *pending_ = std::move(v);
    }
  }

  bool open(json&& container) {
    if (!count() || ++depth_ > 256) return false;
    if (depth_ == 2 && key_ == "params") {
      out_.params = std::move(container);
      stack_.push_back(&out_.params);
    } else if (!stack_.empty()) {
      json& top = *stack_.back();
      json* slot = nullptr;
      if (top.is_array()) {
        top.push_back(std::move(container));
        slot = &top.back();
      } else {
        *pending_ = std::move(container);
        slot = pending_;
      }
      stack_.push_back(slot);
    }
    return true;
  }

  bool close() {
    if (!stack_.empty() && depth_ >= 2) stack_.pop_back();
    --depth_;
    return true;
  }

  Envelope& out_;
  std::size_t depth_ = 0;
  std::size_t values_ = 0;
  std::string key_;
  std::vector<std::string> top_keys_;
  std::vector<json*> stack_;
  json* pending_ = nullptr;
};

bool read_sax(std::string_view text, Envelope& out) {
  EnvelopeSax sax(out);
  return json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                         /*strict=*/true);
}

// --- the messages ---

std::string bare_call() {
  return R"({"jsonrpc":"2.0","id":17,"method":"tools/call",)"
         R"("params":{"name":"test_simple_text","arguments":{}}})";
}

std::string rich_call() {
  return R"({"jsonrpc":"2.0","id":"req-8412","method":"tools/call","params":{)"
         R"("name":"github__search_issues","arguments":{"owner":"modelcontextprotocol",)"
         R"("repo":"typescript-sdk","query":"is:open label:bug \"stream\" résumé",)"
         R"("labels":["bug","transport","needs-triage"],"state":"open","per_page":50,)"
         R"("page":2,"score":0.75,"include_pull_requests":false,"assignee":null,)"
         R"("sort":{"field":"updated","direction":"desc"},"since":"2026-11-01T00:00:00Z"},)"
         R"("_meta":{"progressToken":"p-8412","traceparent":)"
         R"("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}})";
}

std::string write_call() {
  std::string content;
  while (content.size() < 64 * 1024) {
    content += "line of a file that a model writes through a tool, with \\\"quotes\\\"\\n";
  }
  return R"({"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"write_file",)"
         R"("arguments":{"path":"notes/big.txt","content":")" +
         content + R"("}}})";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Read>
double ns_per_message(const std::string& text, int count, int reps, Read read) {
  std::vector<double> batches;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < count; ++i) read(text);
    batches.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                      count);
  }
  return median(batches);
}

// The readers must agree on what they read, or the figures mean nothing.
bool agree(const std::string& text) {
  const auto full = toolmux::jsonrpc::read_full_message(text);
  const auto now = toolmux::jsonrpc::parse_message(text);
  Envelope sax;
  if (full.kind != toolmux::jsonrpc::Message::Kind::request || !read_sax(text, sax)) return false;
  return sax.jsonrpc == "2.0" && sax.id == full.id && sax.method == full.method &&
         sax.params == full.params && now.kind == full.kind && now.id == full.id &&
         now.method == full.method && now.params == full.params;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 20'000;
  int reps = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--count") == 0) count = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
  }
  const std::vector<std::pair<const char*, std::string>> messages = {
      {"bare", bare_call()}, {"rich", rich_call()}, {"write64k", write_call()}};
  std::printf("%-10s %8s %10s %10s %14s\n", "message", "bytes", "full", "sax", "parse_message");
  std::string json_line = R"({"bench":"envelope","unit":"ns per message","messages":[)";
  for (const auto& [name, text] : messages) {
    if (!agree(text)) {
      std::fprintf(stderr, "envelope: the readers disagree on the %s message\n", name);
      return 1;
    }
    const int n = text.size() > 10'000 ? std::max(1, count / 100) : count;
    const double full = ns_per_message(text, n, reps, [](const std::string& t) {
      return toolmux::jsonrpc::read_full_message(t).kind;
    });
    const double sax = ns_per_message(text, n, reps, [](const std::string& t) {
      Envelope e;
      return read_sax(t, e);
    });
    const double now = ns_per_message(text, n, reps, [](const std::string& t) {
      return toolmux::jsonrpc::parse_message(t).kind;
    });
    std::printf("%-10s %8zu %10.0f %10.0f %14.0f\n", name, text.size(), full, sax, now);
    char entry[200];
    std::snprintf(entry, sizeof entry,
                  R"(%s{"message":"%s","bytes":%zu,"full":%.0f,"sax":%.0f,"parse_message":%.0f})",
                  json_line.back() == '[' ? "" : ",", name, text.size(), full, sax, now);
    json_line += entry;
  }
  std::printf("%s]}\n", json_line.c_str());
  return 0;
}
