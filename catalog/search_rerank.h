// Re-ranking of tool_search's candidates by the client's model: the
// sampling/createMessage request that asks it, and the reading of its answer.
// The asking itself is tool_search's (src/builtins/tool_search_rerank.h);
// everything here is pure and deterministic, so that a 2026-07-28 request,
// which is run again from the start with the client's answer, asks the very
// same question on its retry.
//
// What the client's model sees: the query and its alternatives, and for each
// candidate its name and the start of its description on one line (at most
// kRerankLineChars characters). Never an input schema, never a tool that is
// not among the candidates (the caller chose them among the tools it may see).
//
// The answer is untrusted text from a model: it is read as text content only,
// at most kRerankMaxAnswerBytes of it, by a scanner that looks for the first
// "[...]" holding only integers (at most kRerankMaxNumbers of them), without
// recursion and without regular expressions.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolmux {

// The catalog file's "search": {"rerank": {...}} (catalog/catalog_file_search.cpp).
struct SearchRerankSettings {
  bool enabled = false;          // "enabled": off unless the operator turns it on
  std::size_t candidates = 10;   // "candidates": the first hits sent, 2 to 20
  std::size_t max_tokens = 200;  // "maxTokens": the request's maxTokens, 16 to 4096
  // "timeoutMs": how long a legacy-era call waits for the answer (100 to
  // 25000; tool_search's own deadline is 30 s).
  std::chrono::milliseconds timeout{20000};
};

inline constexpr std::size_t kRerankMinCandidates = 2;
inline constexpr std::size_t kRerankMaxCandidates = 20;
inline constexpr std::size_t kRerankLineChars = 160;
inline constexpr std::size_t kRerankMaxAnswerBytes = 8192;
inline constexpr std::size_t kRerankMaxNumbers = 64;

// One candidate as the client's model sees it.
struct RerankCandidate {
  std::string name;
  std::string description;  // the tool's whole description; cut by rerank_line
};

// `description` on one line (runs of white space and control characters
// become one space) and cut to at most `most` characters, at a word when
// there is one in the second half, ending with "…" when cut. Valid UTF-8 in
// (the catalog's descriptions are), valid UTF-8 out.
std::string rerank_line(std::string_view description, std::size_t most = kRerankLineChars);

// The params of the sampling/createMessage request that asks the client's
// model to order `candidates` (best first, as the search ranked them) for
// `query` and its `alternatives`: one user message with the numbered list
// ("1. name: line"), a system prompt asking for the numbers of the tools that
// fit as a JSON array, includeContext "none", maxTokens, temperature 0 and
// model preferences that favour speed over intelligence.
nlohmann::json rerank_request(std::string_view query, const std::vector<std::string>& alternatives,
                              const std::vector<RerankCandidate>& candidates,
                              const SearchRerankSettings& settings);

// What the client's model answered, read.
struct RerankAnswer {
  bool ok = false;
  // When ok: the candidates it chose, as 0-based indices, best first, each
  // once (numbers out of range and repeats are left out). May be empty: the
  // model found none that fits.
  std::vector<std::size_t> chosen;
  std::string problem;  // when not ok: why the answer gives no order
};

// Reads a CreateMessageResult (`result`) for `count` candidates: its text
// content (a text block, or the text blocks of an array of them) must hold a
// JSON-like array of integers; the first such "[...]" is taken. Anything
// else (no text, no such array, only numbers that name no candidate) is not
// ok, with the problem said in words.
RerankAnswer read_rerank_answer(const nlohmann::json& result, std::size_t count);

// The order of all `count` candidates: the chosen ones first, in the model's
// order, then the others in their own order.
std::vector<std::size_t> rerank_order(const std::vector<std::size_t>& chosen, std::size_t count);

}  // namespace toolmux
