#include "src/app/status_board.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/base/redact.h"
#include "src/base/utf8.h"
#include "tests/support/test_tools.h"

using nlohmann::json;
using toolmux::AuditRecord;
using toolmux::StatusFacts;
using toolmux::StatusLimits;
using toolmux::Upstream;
using namespace std::chrono_literals;

namespace {

// A catalog as build_catalog lays it out: `builtins` built-ins, `commands`
// command tools, then each upstream's tools, then tool_search; each tool's
// class is the one named.
struct Layout {
  std::vector<std::pair<std::string, std::string>> builtins;  // name, class
  std::vector<std::pair<std::string, std::string>> commands;
  std::vector<std::tuple<std::string, std::string, std::string>> upstream_tools;  // upstream, ...
};

std::shared_ptr<toolmux::Catalog> catalog_of(const Layout& layout) {
  auto registry = std::make_shared<toolmux::ToolRegistry>();
  const auto add = [&](const std::string& name, const std::string& effect) {
    toolmux::ToolSpec s = toolmux::testing::spec(name, toolmux::testing::object_schema());
    s.side_effect = effect;
    s.description = "The " + name + " tool.";
    REQUIRE(registry
                ->add(s, [](const json&,
                            toolmux::CallContext&) { return toolmux::ToolResult::text("ok"); })
                .empty());
  };
  for (const auto& [name, effect] : layout.builtins) add(name, effect);
  for (const auto& [name, effect] : layout.commands) add(name, effect);
  auto catalog = std::make_shared<toolmux::Catalog>();
  for (const auto& [upstream, name, effect] : layout.upstream_tools) {
    add(name, effect);
    catalog->tool_upstream[name] = upstream;
  }
  add("tool_search", "read_only");
  catalog->builtin_tool_count = layout.builtins.size();
  catalog->command_tool_count = layout.commands.size();
  catalog->registry = std::move(registry);
  return catalog;
}

Upstream::Health health(std::string phase, std::size_t tools) {
  Upstream::Health h;
  h.phase = std::move(phase);
  h.state = h.phase;
  h.tools = tools;
  return h;
}

AuditRecord call(std::string tool, std::string outcome) {
  AuditRecord r;
  r.time = std::chrono::system_clock::time_point(std::chrono::hours(24 * 20000));
  r.principal = "alice";
  r.session = "http-1";
  r.tool = std::move(tool);
  r.side_effect = "read_only";
  r.outcome = std::move(outcome);
  r.duration_ms = 12.5;
  r.arguments = {{"password", "hunter2-secret"}};
  return r;
}

StatusFacts facts_with(std::shared_ptr<const toolmux::Catalog> catalog) {
  StatusFacts facts;
  facts.started = std::chrono::system_clock::time_point(std::chrono::hours(24 * 20000));
  facts.now = facts.started + 90s;
  facts.catalog = std::move(catalog);
  return facts;
}

// The tool names and classes of one source, as "name:class".
std::vector<std::string> tools_of(const json& source) {
  std::vector<std::string> out;
  for (const json& tool : source["tools"]) {
    out.push_back(tool["name"].get<std::string>() + ":" + tool["class"].get<std::string>());
  }
  return out;
}

}  // namespace

TEST_CASE("the status snapshot groups the catalog's tools by source, with each tool's class") {
  StatusFacts facts =
      facts_with(catalog_of({{{"read_file", "read_only"}, {"write_file", "local_mutation"}},
                             {{"deploy", "remote_mutation"}},
                             {{"github", "github_create_issue", "remote_mutation"},
                              {"github", "github_get", "read_only"}}}));
  facts.upstreams = {{"github", health("serving", 2)}, {"lazy", health("not_started", 0)}};
  const json snapshot = toolmux::status_snapshot(facts);

  const json& sources = snapshot["sources"];
  CHECK(sources["total"] == 4);
  CHECK(sources["cut"] == false);
  REQUIRE(sources["items"].size() == 4);
  const json& own = sources["items"][0];
  CHECK(own["kind"] == "toolmux");
  CHECK(tools_of(own) == std::vector<std::string>{"read_file:read_only",
                                                  "write_file:local_mutation",
                                                  "tool_search:read_only"});
  CHECK(own["tools"][0]["description"] == "The read_file tool.");
  CHECK(sources["items"][1]["kind"] == "catalog");
  CHECK(tools_of(sources["items"][1]) == std::vector<std::string>{"deploy:remote_mutation"});
  CHECK(sources["items"][2]["kind"] == "upstream");
  CHECK(sources["items"][2]["name"] == "github");
  CHECK(tools_of(sources["items"][2]) ==
        std::vector<std::string>{"github_create_issue:remote_mutation", "github_get:read_only"});
  // An upstream without tools (not started yet) still shows, empty.
  CHECK(sources["items"][3]["name"] == "lazy");
  CHECK(sources["items"][3]["total"] == 0);

  const json& upstreams = snapshot["upstreams"]["items"];
  REQUIRE(upstreams.size() == 2);
  CHECK(upstreams[0]["name"] == "github");
  CHECK(upstreams[0]["phase"] == "serving");
  CHECK(upstreams[0]["tools"] == 2);
  CHECK(upstreams[1]["phase"] == "not_started");
  CHECK(snapshot["freeze"] == json{{"on", false}});
  CHECK(snapshot["server"]["uptime_s"] == 90);
  CHECK(snapshot["server"]["started"] == "2024-10-04T00:00:00.000Z");
}

TEST_CASE("the status snapshot names the instance and its store") {
  StatusFacts facts = facts_with(catalog_of({}));
  facts.instance = "Xy3_instance";
  facts.store = "postgresql";
  // The shared store's audit trail: each call with the instance that served it.
  facts.calls.push_back(call("read_file", "ok"));
  facts.calls.back().instance = "Other_instance";
  const json snapshot = status_snapshot(facts);
  CHECK(snapshot["server"]["instance"] == "Xy3_instance");
  CHECK(snapshot["server"]["store"] == "postgresql");
  CHECK(snapshot["calls"]["items"][0]["instance"] == "Other_instance");
}

TEST_CASE(
    "the status snapshot shows an upstream's restarts, last error and when its breaker closes") {
  StatusFacts facts = facts_with(catalog_of({}));
  Upstream::Health down = health("restarting", 3);
  down.state = "restarting: the process exited; next attempt in 2.0 s";
  down.last_error = "the process exited";
  down.last_error_at = facts.now - 1s;
  down.next_attempt = facts.now + 2s;
  down.restarts = 4;
  Upstream::Health open = health("breaker_open", 1);
  open.breaker_until = facts.now + 30s;
  facts.upstreams = {{"flaky", down}, {"tripped", open}};
  const json items = toolmux::status_snapshot(facts)["upstreams"]["items"];
  CHECK(items[0]["state"] == "restarting: the process exited; next attempt in 2.0 s");
  CHECK(items[0]["last_error"] == "the process exited");
  CHECK(items[0]["last_error_at"] == "2024-10-04T00:01:29.000Z");
  CHECK(items[0]["next_attempt"] == "2024-10-04T00:01:32.000Z");
  CHECK(items[0]["restarts"] == 4);
  CHECK(items[0]["breaker_until"].is_null());
  CHECK(items[1]["breaker_until"] == "2024-10-04T00:02:00.000Z");
  CHECK(items[1]["last_error_at"].is_null());
}

TEST_CASE("every list in the status snapshot is capped and says when it was cut") {
  Layout layout;
  for (int i = 0; i < 5; ++i) layout.builtins.emplace_back("b" + std::to_string(i), "read_only");
  for (int i = 0; i < 3; ++i) layout.commands.emplace_back("c" + std::to_string(i), "destructive");
  StatusFacts facts = facts_with(catalog_of(layout));
  for (int i = 0; i < 3; ++i)
    facts.upstreams.emplace_back("u" + std::to_string(i), health("serving", 0));
  facts.open_sessions = 7;
  for (int i = 0; i < 3; ++i) {
    facts.sessions.push_back({"http-" + std::to_string(7 - i), "bob", "2025-11-25", 5s, 1s});
  }
  for (int i = 0; i < 4; ++i) facts.calls.push_back(call("b" + std::to_string(i), "ok"));
  StatusLimits limits;
  limits.tools_per_source = 4;
  limits.tools = 6;
  limits.sources = 3;
  limits.upstreams = 2;
  limits.sessions = 2;
  limits.calls = 3;
  const json snapshot = toolmux::status_snapshot(facts, limits);

  const json& sources = snapshot["sources"];
  CHECK(sources["total"] == 5);  // toolmux, catalog, three upstreams
  CHECK(sources["cut"] == true);
  REQUIRE(sources["items"].size() == 3);
  CHECK(sources["items"][0]["total"] == 6);  // five built-ins and tool_search
  CHECK(sources["items"][0]["tools"].size() == 4);
  CHECK(sources["items"][0]["cut"] == true);
  // Six tools in all: two places were left for the catalog's three.
  CHECK(sources["items"][1]["tools"].size() == 2);
  CHECK(sources["items"][1]["cut"] == true);
  CHECK(sources["items"][2]["cut"] == false);

  CHECK(snapshot["upstreams"]["total"] == 3);
  CHECK(snapshot["upstreams"]["items"].size() == 2);
  CHECK(snapshot["upstreams"]["cut"] == true);
  CHECK(snapshot["sessions"]["open"] == 7);
  CHECK(snapshot["sessions"]["items"].size() == 2);
  CHECK(snapshot["sessions"]["cut"] == true);
  CHECK(snapshot["calls"]["items"].size() == 3);
  CHECK(snapshot["calls"]["limit"] == 3);
  CHECK(snapshot["calls"]["cut"] == true);

  facts.calls.resize(3);
  CHECK(toolmux::status_snapshot(facts, limits)["calls"]["cut"] == false);
}

TEST_CASE("text in the status snapshot is cut to its limit as valid UTF-8") {
  StatusFacts facts = facts_with(catalog_of({}));
  Upstream::Health h = health("restarting", 0);
  // 9 bytes, then a 3-byte character across the 10-byte limit; then bytes
  // that are not UTF-8.
  h.last_error = "123456789\u2603\u2603 and more";
  h.state = std::string("bad \xff\xfe bytes");
  facts.upstreams = {{"x", h}};
  StatusLimits limits;
  limits.text_bytes = 10;
  const json item = toolmux::status_snapshot(facts, limits)["upstreams"]["items"][0];
  CHECK(item["last_error"] == "123456789\u2026");
  const std::string state = item["state"];
  CHECK(toolmux::is_valid_utf8(state));
  CHECK(state.rfind("bad ", 0) == 0);
}

TEST_CASE("the status snapshot holds no session id, no arguments, and names sessions by label") {
  StatusFacts facts = facts_with(catalog_of({}));
  facts.open_sessions = 1;
  facts.sessions.push_back({"http-3", "alice", "2025-11-25", 75s, 2500ms});
  facts.modern_requests = 2;
  facts.calls.push_back(call("read_file", "ok"));
  facts.calls.push_back(call("deploy", "tool_error"));
  const json snapshot = toolmux::status_snapshot(facts);

  const json& session = snapshot["sessions"]["items"][0];
  CHECK(session == json{{"label", "http-3"},
                        {"principal", "alice"},
                        {"era", "legacy"},
                        {"protocol", "2025-11-25"},
                        {"age_s", 75.0},
                        {"idle_s", 2.5}});
  CHECK(snapshot["sessions"]["modern_requests"] == 2);
  const json& first = snapshot["calls"]["items"][0];
  CHECK(first == json{{"time", "2024-10-04T00:00:00.000Z"},
                      {"principal", "alice"},
                      {"session", "http-1"},
                      {"tool", "read_file"},
                      {"class", "read_only"},
                      {"outcome", "ok"},
                      {"duration_ms", 12.5}});
  CHECK(snapshot["calls"]["items"][1]["outcome"] == "tool_error");
  CHECK(snapshot.dump().find("hunter2") == std::string::npos);
  CHECK(snapshot["calls"]["unavailable"] == "");
}

TEST_CASE("the status snapshot shows the write freeze, and which tools it holds back") {
  StatusFacts facts = facts_with(catalog_of(
      {{{"read_file", "read_only"}, {"write_file", "local_mutation"}, {"call_tool", "destructive"}},
       {},
       {}}));
  facts.freeze = "migrating the database";
  facts.freeze_since = facts.started + 30s;
  facts.calls_unavailable = "the audit trail is off (serve --no-journal)";
  const json snapshot = toolmux::status_snapshot(facts);
  CHECK(snapshot["freeze"] == json{{"on", true},
                                   {"reason", "migrating the database"},
                                   {"since", "2024-10-04T00:00:30.000Z"}});
  const json& tools = snapshot["sources"]["items"][0]["tools"];
  CHECK(tools[0]["frozen"] == false);
  CHECK(tools[1]["frozen"] == true);
  CHECK(tools[2]["frozen"] == false);  // call_tool stays, reaching the reads
  CHECK(snapshot["calls"]["unavailable"] == "the audit trail is off (serve --no-journal)");
  CHECK(snapshot["calls"]["items"].empty());
}

TEST_CASE(
    "the status snapshot redacts what upstreams, clients and the operator wrote, as the log does, "
    "before it cuts") {
  const std::string token = "ghp_aB3dE6gH9jaB3dE6gH9jaB3dE6gH9jK2mN5p";
  const std::string known = "status-board-test-api-key-Zq81";
  toolmux::register_secret(known);  // as the catalog does with an upstream's fromEnv value
  StatusFacts facts = facts_with(catalog_of({}));
  Upstream::Health down = health("restarting", 0);
  down.last_error = "upstream \"vault\" answered initialize with an error: key " + known +
                    " refused; token " + token + "; password=hunter2-Xy9";
  down.state = "restarting: " + down.last_error;
  // Its token across the cut: cut first, its head would no longer look like one.
  Upstream::Health cut = health("restarting", 0);
  cut.last_error = std::string(20, '.') + " " + token;
  facts.upstreams = {{"vault", down}, {"cut", cut}};
  facts.freeze = "rotating " + token;
  facts.freeze_since = facts.now;
  // A client sent a token as a tool's name.
  facts.calls.push_back(call(token, "unknown_tool"));
  StatusLimits limits;
  limits.text_bytes = 48;
  const json snapshot = toolmux::status_snapshot(facts, limits);
  const std::string text = snapshot.dump();
  INFO(text);
  CHECK(text.find("ghp_") == std::string::npos);
  CHECK(text.find(known) == std::string::npos);
  CHECK(text.find("hunter2") == std::string::npos);
  CHECK(snapshot["upstreams"]["items"][1]["last_error"] ==
        std::string(20, '.') + " [REDACTED:github_token]");
  CHECK(snapshot["freeze"]["reason"] == "rotating [REDACTED:github_token]");
  CHECK(snapshot["calls"]["items"][0]["tool"] == "[REDACTED:github_token]");

  limits.text_bytes = 300;
  const json whole = toolmux::status_snapshot(facts, limits)["upstreams"]["items"][0];
  CHECK(whole["last_error"] ==
        "upstream \"vault\" answered initialize with an error: key [REDACTED] refused; token "
        "[REDACTED:github_token]; password=[REDACTED:secret_value]");

  facts.calls.clear();
  facts.calls_unavailable =
      "the audit trail is unavailable: could not connect with password=hunter2-Xy9";
  CHECK(toolmux::status_snapshot(facts)["calls"]["unavailable"] ==
        "the audit trail is unavailable: could not connect with password=[REDACTED:secret_value]");
}

TEST_CASE("the status page is self-contained: inline script and style with the nonce, no URL") {
  const std::string page(toolmux::status_page_html());
  CHECK(page.find("<script nonce=\"{{TOOLMUX_NONCE}}\">") != std::string::npos);
  CHECK(page.find("<style nonce=\"{{TOOLMUX_NONCE}}\">") != std::string::npos);
  for (const char* external : {"http://", "https://", "src=", "href=", "@import", "url("}) {
    INFO(external);
    CHECK(page.find(external) == std::string::npos);
  }
  // The data reach the page as text only.
  CHECK(page.find("innerHTML") == std::string::npos);
  CHECK(page.find("insertAdjacentHTML") == std::string::npos);
  CHECK(page.find("document.write") == std::string::npos);
}
