#include "src/app/status_board.h"

#include <algorithm>
#include <map>

#include "src/app/catalog_host.h"
#include "src/app/session_directory.h"
#include "src/app/time_text.h"
#include "src/base/redact.h"
#include "src/base/utf8.h"
#include "src/builtins/call_tool.h"

namespace toolmux {
namespace {

using nlohmann::json;
using Clock = std::chrono::system_clock;

// Untrusted text as the page shows it: redacted as the log is (an upstream's
// error can quote its own key, a client can send a token as a tool's name),
// valid UTF-8, at most `max` bytes, and "…" when cut. Redacted before it is
// cut, so that no cut leaves a secret's head that no longer looks like one.
std::string clip(std::string_view text, std::size_t max) {
  std::string valid = lossy_utf8(redact(text));
  if (valid.size() <= max) return valid;
  return std::string(utf8_prefix(valid, max)) + "\u2026";
}

json time_or_null(const std::optional<Clock::time_point>& at) {
  return at ? json(format_rfc3339(*at)) : json(nullptr);
}

double seconds_of(std::chrono::steady_clock::duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) /
         1000.0;
}

// Tools grouped by where they come from: toolmux, the catalog file, each
// upstream (in the file's order; an upstream with no tools still shows).
json sources_of(const StatusFacts& facts, const StatusLimits& limits) {
  struct Source {
    std::string kind;
    std::string name;
    std::vector<const RegisteredTool*> tools;
  };
  std::vector<Source> sources = {{"toolmux", "toolmux", {}}, {"catalog", "catalog file", {}}};
  std::map<std::string, std::size_t, std::less<>> upstream_at;
  for (const auto& [name, health] : facts.upstreams) {
    upstream_at.emplace(name, sources.size());
    sources.push_back({"upstream", name, {}});
  }
  if (const Catalog* catalog = facts.catalog.get(); catalog && catalog->registry) {
    const auto& tools = catalog->registry->tools();
    for (std::size_t i = 0; i < tools.size(); ++i) {
      const RegisteredTool* tool = tools[i].get();
      std::size_t at = 0;  // toolmux: the built-ins, and tool_search after the rest
      if (auto upstream = catalog->tool_upstream.find(tool->spec.name);
          upstream != catalog->tool_upstream.end()) {
        auto [known, added] = upstream_at.emplace(upstream->second, sources.size());
        if (added) sources.push_back({"upstream", upstream->second, {}});
        at = known->second;
      } else if (i >= catalog->builtin_tool_count &&
                 i < catalog->builtin_tool_count + catalog->command_tool_count) {
        at = 1;
      }
      sources[at].tools.push_back(tool);
    }
  }
  json items = json::array();
  std::size_t tools_shown = 0;
  for (std::size_t s = 0; s < sources.size() && s < limits.sources; ++s) {
    const Source& source = sources[s];
    json tools = json::array();
    for (const RegisteredTool* tool : source.tools) {
      if (tools.size() >= limits.tools_per_source || tools_shown >= limits.tools) break;
      const bool frozen = facts.freeze && tool->side_effect != SideEffect::read_only &&
                          tool->spec.name != kCallTool;
      tools.push_back({{"name", clip(tool->spec.name, limits.text_bytes)},
                       {"class", side_effect_name(tool->side_effect)},
                       {"description", clip(tool->spec.description, limits.text_bytes)},
                       {"frozen", frozen}});
      ++tools_shown;
    }
    const bool cut = tools.size() < source.tools.size();
    items.push_back({{"kind", source.kind},
                     {"name", clip(source.name, limits.text_bytes)},
                     {"total", source.tools.size()},
                     {"cut", cut},
                     {"tools", std::move(tools)}});
  }
  return {{"total", sources.size()},
          {"cut", sources.size() > limits.sources},
          {"items", std::move(items)}};
}

json upstreams_of(const StatusFacts& facts, const StatusLimits& limits) {
  json items = json::array();
  for (const auto& [name, health] : facts.upstreams) {
    if (items.size() >= limits.upstreams) break;
    items.push_back({{"name", clip(name, limits.text_bytes)},
                     {"phase", health.phase},
                     {"state", clip(health.state, limits.text_bytes)},
                     {"last_error", clip(health.last_error, limits.text_bytes)},
                     {"last_error_at", time_or_null(health.last_error_at)},
                     {"restarts", health.restarts},
                     {"tools", health.tools},
                     {"breaker_until", time_or_null(health.breaker_until)},
                     {"next_attempt", time_or_null(health.next_attempt)},
                     {"protocol", health.protocol}});
  }
  return {{"total", facts.upstreams.size()},
          {"cut", facts.upstreams.size() > limits.upstreams},
          {"items", std::move(items)}};
}

json sessions_of(const StatusFacts& facts, const StatusLimits& limits) {
  json items = json::array();
  for (const SessionManager::Summary& s : facts.sessions) {
    if (items.size() >= limits.sessions) break;
    items.push_back({{"label", s.label},
                     {"principal", clip(s.principal, limits.text_bytes)},
                     {"era", "legacy"},
                     {"protocol", clip(s.protocol_version, limits.text_bytes)},
                     {"age_s", seconds_of(s.age)},
                     {"idle_s", seconds_of(s.idle)}});
  }
  const std::size_t open = std::max(facts.open_sessions, facts.sessions.size());
  return {{"open", open},
          {"cut", open > items.size()},
          {"modern_requests", facts.modern_requests},
          {"items", std::move(items)}};
}

json calls_of(const StatusFacts& facts, const StatusLimits& limits) {
  json items = json::array();
  for (const AuditRecord& r : facts.calls) {
    if (items.size() >= limits.calls) break;
    json item = {{"time", format_rfc3339(r.time)},
                 {"principal", clip(r.principal, limits.text_bytes)},
                 {"session", clip(r.session, limits.text_bytes)},
                 {"tool", clip(r.tool, limits.text_bytes)},
                 {"class", r.side_effect},
                 {"outcome", r.outcome},
                 {"duration_ms", r.duration_ms}};
    // The shared store: which instance served it.
    if (!r.instance.empty()) item["instance"] = clip(r.instance, limits.text_bytes);
    items.push_back(std::move(item));
  }
  return {{"limit", limits.calls},
          {"cut", facts.calls.size() > limits.calls},
          {"unavailable", redact(facts.calls_unavailable)},
          {"kept", facts.calls_kept},
          {"items", std::move(items)}};
}

}  // namespace

json status_snapshot(const StatusFacts& facts, const StatusLimits& limits) {
  json freeze = {{"on", facts.freeze.has_value()}};
  if (facts.freeze) {
    freeze["reason"] = clip(*facts.freeze, limits.text_bytes);
    freeze["since"] = time_or_null(facts.freeze_since);
  }
  return {{"server",
           {{"version", TOOLMUX_VERSION},
            {"instance", facts.instance},
            {"store", facts.store},
            {"now", format_rfc3339(facts.now)},
            {"started", format_rfc3339(facts.started)},
            {"uptime_s",
             std::chrono::duration_cast<std::chrono::seconds>(facts.now - facts.started).count()}}},
          {"freeze", std::move(freeze)},
          {"sources", sources_of(facts, limits)},
          {"upstreams", upstreams_of(facts, limits)},
          {"sessions", sessions_of(facts, limits)},
          {"calls", calls_of(facts, limits)}};
}

StatusBoard::StatusBoard(CatalogHost& host, SessionDirectory& sessions,
                         std::shared_ptr<const CallJournal> journal, StatusLimits limits,
                         std::string instance, std::string store)
    : host_(host),
      sessions_(sessions),
      journal_(std::move(journal)),
      limits_(limits),
      instance_(std::move(instance)),
      store_(std::move(store)) {}

StatusFacts StatusBoard::gather() const {
  StatusFacts facts;
  facts.now = Clock::now();
  facts.started = started_;
  facts.instance = instance_;
  facts.store = store_;
  facts.catalog = host_.current();
  for (const auto& upstream : host_.upstreams()) {
    facts.upstreams.emplace_back(upstream->name(), upstream->health());
  }
  facts.open_sessions = sessions_.count();
  facts.sessions = sessions_.manager().summaries(limits_.sessions);
  facts.modern_requests = sessions_.requests_in_flight();
  if (facts.catalog && facts.catalog->write_freeze) {
    facts.freeze = facts.catalog->write_freeze;
    // The file's time; serve --read-only has been frozen since it started.
    facts.freeze_since = host_.freeze_since().value_or(started_);
  }
  // No journal, or one off by choice (serve --no-journal): no store, no reason.
  const bool off =
      !journal_ || (journal_->ready() && !journal_->store() && journal_->unavailable().empty());
  if (off) {
    facts.calls_unavailable = "the audit trail is off (serve --no-journal)";
  } else if (!journal_->ready()) {
    facts.calls_unavailable = "the audit trail is still opening";
  } else if (const auto& store = journal_->store()) {
    facts.calls = store->latest_audit(limits_.calls + 1);
    facts.calls_kept = store->kept();
  } else {
    facts.calls_unavailable = "the audit trail is unavailable: " + journal_->unavailable();
  }
  return facts;
}

json StatusBoard::snapshot() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (last_.is_null() || now - made_ >= std::chrono::milliseconds(500)) {
    last_ = status_snapshot(gather(), limits_);
    made_ = now;
  }
  return last_;
}

}  // namespace toolmux
