#include "src/cli.h"

#include "src/check_fuzz_options.h"

#include <charconv>

namespace toolmux {
namespace {

CommandLine usage_error(std::string message) {
  CommandLine cl;
  cl.action = CommandLine::Action::usage_error;
  cl.error = std::move(message);
  return cl;
}

bool parse_size(const std::string& text, std::size_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string usage_text() {
  return R"(toolmux — a managed MCP tool catalog server

Usage:
  toolmux serve [options]     Serve MCP over stdio (one JSON-RPC message per line),
                              or over Streamable HTTP with --http.
  toolmux check FILE [--allow-writes] [--root DIR]...
                              Check a catalog file against the tools serve would offer
                              with those options; list every problem with its JSON pointer.
  toolmux check --fuzz FILE [--cases N] [--seed S] [--allow-writes] [--root DIR]...
                              Also call every tool with N (default 20) valid argument sets
                              and near misses generated from its input schema, through the
                              argument checks only (no tool runs); exit 1 on any failure.
  toolmux search [--catalog FILE] [--limit N] [--allow-writes] [--root DIR]... QUERY
                              Run tool_search's search over that catalog, as an operator
                              tuning it would.
  toolmux --version           Print the version.
  toolmux --help              Print this help.

Options for serve:
  --catalog FILE              Catalog file with command tools (see README, examples/catalog.json).
  --root DIR                  A folder the filesystem tools may use; repeatable.
                              Default: the working directory.
  --data-dir DIR              Where toolmux keeps its state.
                              Default: $XDG_STATE_HOME/toolmux (~/.local/state/toolmux).
  --allow-writes              Offer write_text_file (a local mutation) inside the roots.
  --page-size N               Tools per tools/list page (default: all on one page).
  --max-message-bytes N       Largest message accepted (default: 16777216).
  --log-level LEVEL           stderr log level: debug, info, warning, error (default: info).
  --max-calls N               Calls (tools/call, resources/..., prompts/..., completion)
                              running at once, overall (default: 64, at most 1024).
  --max-session-calls N       The same, per session (default: 16).
  --max-queued-calls N        Calls waiting for a place to run (default: 256); past it a
                              call is refused at once with a "toolmux is busy" error.
  --shutdown-grace SECONDS    When stdin closes (or, over HTTP, on SIGTERM), how long
                              running calls may finish (default: 10).

Options for serve --http:
  --http HOST:PORT            Serve Streamable HTTP on that address (e.g. 127.0.0.1:8080;
                              port 0 picks a free one; the log says which).
  --path PATH                 The MCP endpoint (default: /mcp). Also served: /health, /metrics.
  --allow-host NAME           A Host header name accepted besides localhost, 127.0.0.1 and
                              [::1]; repeatable. Needed when clients reach another name.
  --allow-origin ORIGIN       A browser Origin accepted besides loopback ones; repeatable.
  --tokens-file FILE          Bearer tokens, "principal=token" per line; with it (or with
                              $TOOLMUX_TOKENS holding the same entries) every request needs one.
  --max-sessions N            Open sessions at most (default: 1000); then new ones get 503.
  --session-idle SECONDS      A session unused this long ends (default: 3600).
  --max-session-queued-calls N
                              Calls one session may have waiting (default: 64); past it
                              its calls get "toolmux is busy" while others still queue.
  --max-connections N         Connections open at once (default: 1024); then 503.
  --max-connections-per-client N
                              Connections open at once from one client address
                              (default: 256); then 503.
  --header-timeout SECONDS    A request head must arrive within this (default: 10).
  --body-timeout SECONDS      A request body must arrive within this after its head
                              (default: 60).
)";
}

std::optional<std::string> take_check_fuzz_options(std::vector<std::string>& args,
                                                   CheckFuzzOptions& out) {
  if (args.empty() || args[0] != "check") return std::nullopt;
  bool cases_or_seed = false;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--fuzz") {
      out.fuzz = true;
    } else if (a == "--cases" || a == "--seed") {
      std::size_t n = 0;
      if (i + 1 >= args.size() || !parse_size(args[i + 1], n) ||
          (a == "--cases" && (n == 0 || n > 1000))) {
        return a == "--cases" ? "--cases needs a whole number from 1 to 1000"
                              : "--seed needs a whole number";
      }
      (a == "--cases" ? out.cases : out.seed) = n;
      cases_or_seed = true;
      ++i;
    } else {
      rest.push_back(a);
    }
  }
  if (cases_or_seed && !out.fuzz) return "--cases and --seed go with --fuzz";
  args = std::move(rest);
  return std::nullopt;
}

CommandLine parse_command_line(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("missing command (serve, check, --version, --help)");
  CommandLine cl;
  const std::string& command = args[0];
  if (command == "--version" || command == "version") {
    cl.action = CommandLine::Action::version;
    return cl;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    cl.action = CommandLine::Action::help;
    return cl;
  }
  if (command == "check") {
    // The catalog is checked against the tools `serve` would offer, so the
    // options that change those are accepted here too.
    cl.action = CommandLine::Action::check;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--allow-writes") {
        cl.serve.allow_writes = true;
      } else if (args[i] == "--root" && i + 1 < args.size()) {
        cl.serve.roots.emplace_back(args[++i]);
      } else if (!args[i].empty() && args[i][0] != '-' && cl.check_file.empty()) {
        cl.check_file = args[i];
      } else {
        return usage_error(
            "check takes one FILE and optionally --allow-writes, --root DIR and --fuzz");
      }
    }
    if (cl.check_file.empty()) return usage_error("check needs a FILE");
    cl.serve.catalog_file = cl.check_file;
    return cl;
  }
  if (command == "search") {
    // The same search tool_search runs, over the catalog serve would offer.
    cl.action = CommandLine::Action::search;
    for (std::size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--allow-writes") {
        cl.serve.allow_writes = true;
      } else if ((a == "--catalog" || a == "--root" || a == "--limit") && i + 1 < args.size()) {
        const std::string& v = args[++i];
        if (a == "--catalog") cl.serve.catalog_file = v;
        if (a == "--root") cl.serve.roots.emplace_back(v);
        if (a == "--limit" &&
            (!parse_size(v, cl.search_limit) || cl.search_limit == 0 || cl.search_limit > 20)) {
          return usage_error("--limit needs a whole number from 1 to 20");
        }
      } else if (!a.empty() && a[0] == '-') {
        return usage_error("unknown option \"" + a + "\" for search");
      } else {
        cl.search_query += (cl.search_query.empty() ? "" : " ") + a;
      }
    }
    if (cl.search_query.empty()) return usage_error("search needs a QUERY");
    return cl;
  }
  if (command != "serve") return usage_error("unknown command \"" + command + "\"");

  cl.action = CommandLine::Action::serve;
  ServeOptions& o = cl.serve;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (flag == "--allow-writes") {
      o.allow_writes = true;
    } else if (flag == "--help" || flag == "-h") {
      cl.action = CommandLine::Action::help;
      return cl;
    } else if (flag == "--catalog" || flag == "--root" || flag == "--data-dir" ||
               flag == "--page-size" || flag == "--max-message-bytes" || flag == "--log-level") {
      if (!value(v) || v.empty()) return usage_error(flag + " needs a value");
      if (flag == "--catalog") {
        o.catalog_file = v;
      } else if (flag == "--root") {
        o.roots.emplace_back(v);
      } else if (flag == "--data-dir") {
        o.data_dir = v;
      } else if (flag == "--page-size") {
        if (!parse_size(v, o.page_size) || o.page_size == 0) {
          return usage_error("--page-size needs a whole number above 0");
        }
      } else if (flag == "--max-message-bytes") {
        if (!parse_size(v, o.max_message_bytes) || o.max_message_bytes < 1024) {
          return usage_error("--max-message-bytes needs a whole number of at least 1024");
        }
      } else {
        auto level = log_level_from_name(v);
        if (!level) return usage_error("--log-level must be debug, info, warning or error");
        o.log_level = *level;
      }
    } else if (flag == "--http") {
      if (!value(v)) return usage_error("--http needs HOST:PORT");
      const auto colon = v.rfind(':');
      std::size_t port = 0;
      if (colon == std::string::npos || colon == 0 || !parse_size(v.substr(colon + 1), port) ||
          port > 65535) {
        return usage_error("--http needs HOST:PORT, e.g. 127.0.0.1:8080 (got \"" + v + "\")");
      }
      o.http = true;
      o.http_host = v.substr(0, colon);
      if (o.http_host.size() > 2 && o.http_host.front() == '[' && o.http_host.back() == ']') {
        o.http_host = o.http_host.substr(1, o.http_host.size() - 2);
      }
      o.http_port = static_cast<int>(port);
    } else if (flag == "--path" || flag == "--allow-host" || flag == "--allow-origin" ||
               flag == "--tokens-file") {
      if (!value(v) || v.empty()) return usage_error(flag + " needs a value");
      if (flag == "--path") {
        if (v[0] != '/') return usage_error("--path must start with /");
        o.http_path = v;
      } else if (flag == "--allow-host") {
        o.allowed_hosts.push_back(v);
      } else if (flag == "--allow-origin") {
        o.allowed_origins.push_back(v);
      } else {
        o.tokens_file = v;
      }
    } else if (flag == "--max-calls" || flag == "--max-session-calls" ||
               flag == "--max-queued-calls" || flag == "--max-session-queued-calls") {
      std::size_t n = 0;
      const bool queue = flag == "--max-queued-calls" || flag == "--max-session-queued-calls";
      const std::size_t most = queue ? 100000 : 1024;
      if (!value(v) || !parse_size(v, n) || (n == 0 && !queue) || n > most) {
        return usage_error(flag + " needs a whole number from " + (queue ? "0" : "1") + " to " +
                           std::to_string(most));
      }
      if (flag == "--max-calls") o.max_calls = n;
      if (flag == "--max-session-calls") o.max_session_calls = n;
      if (flag == "--max-queued-calls") o.max_queued_calls = n;
      if (flag == "--max-session-queued-calls") o.max_session_queued_calls = n;
    } else if (flag == "--max-sessions" || flag == "--session-idle" || flag == "--shutdown-grace" ||
               flag == "--max-connections" || flag == "--max-connections-per-client" ||
               flag == "--header-timeout" || flag == "--body-timeout") {
      std::size_t n = 0;
      if (!value(v) || !parse_size(v, n) || n == 0) {
        return usage_error(flag + " needs a whole number above 0");
      }
      if (flag == "--max-sessions") o.max_sessions = n;
      if (flag == "--session-idle") o.session_idle_seconds = n;
      if (flag == "--shutdown-grace") o.shutdown_grace_seconds = n;
      if (flag == "--max-connections") o.max_connections = n;
      if (flag == "--max-connections-per-client") o.max_connections_per_client = n;
      if (flag == "--header-timeout") o.header_timeout_seconds = n;
      if (flag == "--body-timeout") o.body_timeout_seconds = n;
    } else {
      return usage_error("unknown option \"" + flag + "\" for serve");
    }
  }
  const bool http_only = !o.tokens_file.empty() || !o.allowed_hosts.empty() ||
                         !o.allowed_origins.empty() || o.http_path != "/mcp";
  if (http_only && !o.http) return usage_error("those options need --http HOST:PORT");
  return cl;
}

}  // namespace toolmux
