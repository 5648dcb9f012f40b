// Clicks for tool_search's memory of use (catalog/search_memory.h): the last
// few searches of each caller, with the tools each answered with, and the
// calls that follow them.
//
// A caller is a session (a legacy client's) or a principal (2026-07-28
// requests have no session): the call pipeline names it (caller_key). When a
// caller calls a tool that one of its remembered searches answered with, that
// is a click: the memory records (the search's terms, the tool), once per
// search and tool, so that a second call of the same tool after the same
// search is not a second click. A search asked again with the same terms is
// the same search (it moves to the newest place and keeps its clicks).
//
// Bounds: at most max_searches searches per caller (the oldest goes), at most
// max_tools tools per search (the first ones), at most max_callers callers
// (the one that searched least recently goes), and a search older than
// max_age no longer counts (nor is it kept). Only what SearchMemory::terms
// gives and tool names are kept, never a query's text or a call's arguments,
// and never on disk: only the memory is saved (src/store/search_memory_file.h).
//
// Thread-safe: every method may be called from any thread at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catalog/search_memory.h"

namespace toolmux {

struct SearchClickOptions {
  std::size_t max_searches = 4;  // per caller
  std::size_t max_callers = 1024;
  std::size_t max_tools = 20;  // per search: tool_search answers at most 20
  std::chrono::seconds max_age{std::chrono::minutes(10)};
  // The clock, replaceable in tests of max_age.
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
};

class SearchClicks {
 public:
  // `memory` (not null) receives the clicks; it is shared with tool_search,
  // which ranks by it, and with the file it is saved in.
  explicit SearchClicks(std::shared_ptr<SearchMemory> memory, SearchClickOptions options = {});
  SearchClicks(const SearchClicks&) = delete;
  SearchClicks& operator=(const SearchClicks&) = delete;

  // The key of a call's caller: its principal for a request of the
  // 2026-07-28 protocol (or a call outside a session), else its session.
  static std::string caller_key(std::string_view session_id, std::string_view principal,
                                bool modern);

  // `caller` searched with `terms` (SearchMemory::terms of the query and its
  // alternatives) and was answered with `tools`, best first. Nothing is kept
  // when either is empty.
  void searched(const std::string& caller, std::vector<std::string> terms,
                std::vector<std::string> tools);

  // `caller` called `tool` (its name as tool_search reports it): records a
  // click for each remembered search of the caller that answered with it and
  // had no click on it yet. Returns the number recorded.
  std::size_t called(const std::string& caller, const std::string& tool);

  const std::shared_ptr<SearchMemory>& memory() const { return memory_; }
  std::size_t caller_count() const;
  std::size_t search_count(const std::string& caller) const;  // its searches that still count

 private:
  using Clock = std::chrono::steady_clock;
  struct Search {
    Clock::time_point at;
    std::vector<std::string> terms;
    std::vector<std::string> tools;
    std::vector<bool> clicked;  // by tool
  };
  struct Caller {
    std::deque<Search> searches;             // oldest first
    std::list<std::string>::iterator place;  // in by_recency_
  };

  // Drops the caller's searches older than max_age; under mutex_.
  void expire(Caller& caller, Clock::time_point now) const;
  // Drops the callers whose last search is older than max_age; under mutex_.
  void expire_callers(Clock::time_point now);

  const std::shared_ptr<SearchMemory> memory_;
  const SearchClickOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Caller> callers_;
  std::list<std::string> by_recency_;  // callers, the latest to search first
};

}  // namespace toolmux
