#include "src/builtins/search_clicks.h"

#include <algorithm>
#include <utility>

namespace toolmux {

SearchClicks::SearchClicks(std::shared_ptr<SearchMemory> memory, SearchClickOptions options)
    : memory_(std::move(memory)), options_(std::move(options)) {}

std::string SearchClicks::caller_key(std::string_view session_id, std::string_view principal,
                                     bool modern) {
  // Prefixed, so that a principal never shares its searches with a session
  // whose id happens to equal its name.
  if (modern || session_id.empty()) return "principal " + std::string(principal);
  return "session " + std::string(session_id);
}

void SearchClicks::expire(Caller& caller, Clock::time_point now) const {
  while (!caller.searches.empty() && now - caller.searches.front().at > options_.max_age)
    caller.searches.pop_front();
}

void SearchClicks::expire_callers(Clock::time_point now) {
  // by_recency_ is in the order of the callers' last searches: the stale ones
  // are at its end.
  while (!by_recency_.empty()) {
    auto it = callers_.find(by_recency_.back());
    if (it != callers_.end() && !it->second.searches.empty() &&
        now - it->second.searches.back().at <= options_.max_age) {
      break;
    }
    if (it != callers_.end()) callers_.erase(it);
    by_recency_.pop_back();
  }
}

void SearchClicks::searched(const std::string& caller, std::vector<std::string> terms,
                            std::vector<std::string> tools) {
  if (terms.empty() || tools.empty() || options_.max_searches == 0 || options_.max_callers == 0)
    return;
  if (tools.size() > options_.max_tools) tools.resize(options_.max_tools);
  const Clock::time_point now = options_.now();
  std::lock_guard lock(mutex_);
  expire_callers(now);
  auto it = callers_.find(caller);
  if (it == callers_.end()) {
    while (callers_.size() >= options_.max_callers && !by_recency_.empty()) {
      callers_.erase(by_recency_.back());
      by_recency_.pop_back();
    }
    by_recency_.push_front(caller);
    it = callers_.emplace(caller, Caller{{}, by_recency_.begin()}).first;
  } else {
    by_recency_.splice(by_recency_.begin(), by_recency_, it->second.place);
  }
  Caller& entry = it->second;
  expire(entry, now);
  Search search{now, std::move(terms), std::move(tools), {}};
  search.clicked.assign(search.tools.size(), false);
  // The same words again: the same search, with what was clicked after it.
  auto same = std::find_if(entry.searches.begin(), entry.searches.end(),
                           [&](const Search& s) { return s.terms == search.terms; });
  if (same != entry.searches.end()) {
    for (std::size_t i = 0; i < search.tools.size(); ++i) {
      auto was = std::find(same->tools.begin(), same->tools.end(), search.tools[i]);
      if (was != same->tools.end())
        search.clicked[i] = same->clicked[static_cast<std::size_t>(was - same->tools.begin())];
    }
    entry.searches.erase(same);
  }
  entry.searches.push_back(std::move(search));
  while (entry.searches.size() > options_.max_searches) entry.searches.pop_front();
}

std::size_t SearchClicks::called(const std::string& caller, const std::string& tool) {
  std::vector<std::vector<std::string>> clicks;
  {
    std::lock_guard lock(mutex_);
    auto it = callers_.find(caller);
    if (it == callers_.end()) return 0;
    expire(it->second, options_.now());
    for (Search& search : it->second.searches) {
      auto at = std::find(search.tools.begin(), search.tools.end(), tool);
      if (at == search.tools.end()) continue;
      const auto i = static_cast<std::size_t>(at - search.tools.begin());
      if (search.clicked[i]) continue;
      search.clicked[i] = true;
      clicks.push_back(search.terms);
    }
  }
  // The memory has a lock of its own: not held while this one is.
  for (const auto& terms : clicks) memory_->record(terms, tool);
  return clicks.size();
}

std::size_t SearchClicks::caller_count() const {
  std::lock_guard lock(mutex_);
  return callers_.size();
}

std::size_t SearchClicks::search_count(const std::string& caller) const {
  std::lock_guard lock(mutex_);
  auto it = callers_.find(caller);
  if (it == callers_.end()) return 0;
  const Clock::time_point now = options_.now();
  return static_cast<std::size_t>(
      std::count_if(it->second.searches.begin(), it->second.searches.end(),
                    [&](const Search& s) { return now - s.at <= options_.max_age; }));
}

}  // namespace toolmux
