#include "src/builtins/tool_search_rerank.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>

#include "src/base/utf8.h"

namespace toolmux {

using nlohmann::json;

namespace {

// The question's key among the call's questions (2026-07-28 inputRequests).
constexpr const char* kQuestionKey = "tool_search-rerank";
// The time kept after the wait for the search to answer before the call's deadline.
constexpr std::chrono::milliseconds kAnswerMargin{500};

// Requests a stop once `after` has passed, unless destroyed first: a bound on
// a wait that only a stop_token can end. One thread, joined at destruction.
class StopAfter {
 public:
  explicit StopAfter(std::chrono::milliseconds after)
      : thread_([this, after](const std::stop_token& own) {
          std::mutex mutex;
          std::condition_variable_any woken;
          std::unique_lock lock(mutex);
          // Returns early only when the owner is destroyed (own stop).
          if (!woken.wait_for(lock, own, after, [] { return false; }) && !own.stop_requested()) {
            fired_.store(true);
            source_.request_stop();
          }
        }) {}
  std::stop_token token() const { return source_.get_token(); }
  bool fired() const { return fired_.load(); }

 private:
  std::stop_source source_;
  std::atomic<bool> fired_{false};
  std::jthread thread_;  // last: stopped and joined before the others go
};

}  // namespace

bool client_declares_sampling(const CallContext& context) {
  const json capabilities = context.client_capabilities();
  return capabilities.is_object() && capabilities.contains("sampling");
}

RerankOutcome ask_client_to_rerank(CallContext& context, const SearchRerankSettings& settings,
                                   const ToolSearchQuery& query,
                                   const std::vector<const json*>& tools) {
  RerankOutcome outcome;
  if (!client_declares_sampling(context)) return outcome;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      context.deadline() - std::chrono::steady_clock::now() - kAnswerMargin);
  const auto wait = std::min(settings.timeout, left);
  if (wait.count() <= 0) return outcome;
  std::vector<RerankCandidate> candidates;
  candidates.reserve(tools.size());
  for (const json* tool : tools) {
    candidates.push_back({(*tool)["name"].get<std::string>(), tool->value("description", "")});
  }
  const json params = rerank_request(query.query, query.alternatives, candidates, settings);
  outcome.asked = true;
  StopAfter timer(wait);
  ClientAnswer answer =
      context.ask_client("sampling/createMessage", params, timer.token(), kQuestionKey);
  if (answer.pending) {
    outcome.problem = "the client answers with a retry";
    return outcome;
  }
  if (!answer.result) {
    if (!timer.fired()) {
      outcome.problem = clip_for_message(answer.error);
    } else if (wait == settings.timeout) {
      outcome.problem = "the client's model did not answer within " +
                        std::to_string(settings.timeout.count()) + " ms";
    } else {
      outcome.problem = "the client's model did not answer before the call's deadline";
    }
    return outcome;
  }
  RerankAnswer read = read_rerank_answer(*answer.result, tools.size());
  if (!read.ok) {
    outcome.problem = std::move(read.problem);
    return outcome;
  }
  outcome.chosen = std::move(read.chosen);
  return outcome;
}

}  // namespace toolmux
