#include "catalog/search_memory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "catalog/text_analysis.h"
#include "src/base/utf8.h"

namespace toolmux {

namespace {

constexpr std::string_view kMagic = "TMSM";
constexpr std::uint16_t kVersion = 1;
// A count read back is at most this (a billion clicks is not a real one).
constexpr double kMaxCount = 1e9;
// magic, version, time saved, term count; the checksum after the terms.
constexpr std::size_t kHeaderBytes = 4 + 2 + 8 + 4;
constexpr std::size_t kChecksumBytes = 8;

bool valid_term(std::string_view term) {
  if (term.empty() || term.size() > SearchMemory::kMaxTermBytes) return false;
  const auto digits =
      std::count_if(term.begin(), term.end(), [](char c) { return c >= '0' && c <= '9'; });
  return static_cast<std::size_t>(digits) < SearchMemory::kMaxTermDigits &&
         static_cast<std::size_t>(digits) < term.size() && is_valid_utf8(term);
}

bool valid_tool(std::string_view tool) {
  return !tool.empty() && tool.size() <= SearchMemory::kMaxToolBytes && is_valid_utf8(tool);
}

// The distinct valid terms of `terms`, the first kMaxQueryTerms.
std::vector<std::string_view> distinct_terms(const std::vector<std::string>& terms) {
  std::vector<std::string_view> out;
  for (const auto& term : terms) {
    if (out.size() == SearchMemory::kMaxQueryTerms) break;
    if (valid_term(term) && std::find(out.begin(), out.end(), term) == out.end())
      out.emplace_back(term);
  }
  return out;
}

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

// Little-endian fixed-width integers and floats.
template <class T>
void put(std::string& out, T value) {
  std::uint64_t bits = 0;
  if constexpr (std::is_same_v<T, float>) {
    std::uint32_t word = 0;
    std::memcpy(&word, &value, sizeof(word));
    bits = word;
  } else {
    bits = static_cast<std::uint64_t>(value);
  }
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFFU));
}

// Reads the saved form front to back; every read is checked against the end.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  std::size_t at() const { return at_; }
  bool has(std::size_t n) const { return bytes_.size() - at_ >= n; }

  template <class T>
  bool get(T& value) {
    if (!has(sizeof(T))) return false;
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      bits |= std::uint64_t{static_cast<unsigned char>(bytes_[at_ + i])} << (8 * i);
    at_ += sizeof(T);
    if constexpr (std::is_same_v<T, float>) {
      const auto word = static_cast<std::uint32_t>(bits);
      std::memcpy(&value, &word, sizeof(value));
    } else {
      value = static_cast<T>(bits);
    }
    return true;
  }

  bool text(std::size_t n, std::string_view& out) {
    if (!has(n)) return false;
    out = bytes_.substr(at_, n);
    at_ += n;
    return true;
  }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

Status damaged(const std::string& what, std::size_t at) {
  return Status::invalid_argument("the search memory is damaged: " + what + " (at byte " +
                                  std::to_string(at) + ")");
}

}  // namespace

SearchMemory::SearchMemory(SearchMemoryOptions options) : options_(std::move(options)) {}
SearchMemory::~SearchMemory() = default;

std::vector<std::string> SearchMemory::terms(std::string_view query) {
  static const text::TextAnalyzer kAnalyzer{true, true};
  std::vector<std::string> out;
  kAnalyzer.analyze(query, false, [&out](std::string_view term) {
    if (out.size() < kMaxQueryTerms && valid_term(term) &&
        std::find(out.begin(), out.end(), term) == out.end()) {
      out.emplace_back(term);
    }
  });
  return out;
}

std::int64_t SearchMemory::now_seconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(options_.now().time_since_epoch())
      .count();
}

double SearchMemory::decay(std::int64_t stamp, std::int64_t now) const {
  const auto half_life = static_cast<double>(options_.half_life.count());
  if (now <= stamp || half_life <= 0) return 1.0;
  return std::exp2(-static_cast<double>(now - stamp) / half_life);
}

void SearchMemory::refresh(Term& term, std::int64_t now) const {
  const double factor = decay(term.stamp, now);
  if (factor < 1.0) {
    for (Tool& tool : term.tools) tool.count *= factor;
    std::erase_if(term.tools, [](const Tool& tool) { return tool.count < kForgottenCount; });
  }
  term.stamp = now;
}

void SearchMemory::make_room(Terms& terms, std::int64_t now, std::size_t room,
                             bool by_tenths) const {
  if (terms.size() + room <= options_.max_terms) return;
  // A tenth at a time, so that a full memory sorts once per many new terms.
  const std::size_t over = terms.size() + room - options_.max_terms;
  const std::size_t drop =
      std::min(terms.size(), by_tenths ? std::max(over, options_.max_terms / 10) : over);
  std::vector<std::pair<double, const std::string*>> strength;
  strength.reserve(terms.size());
  for (const auto& [key, term] : terms) {
    double total = 0;
    for (const Tool& tool : term.tools) total += tool.count;
    strength.emplace_back(total * decay(term.stamp, now), &key);
  }
  auto weaker = [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : *x.second < *y.second;
  };
  std::nth_element(strength.begin(), strength.begin() + static_cast<std::ptrdiff_t>(drop),
                   strength.end(), weaker);
  std::vector<std::string> gone;
  gone.reserve(drop);
  for (std::size_t i = 0; i < drop; ++i) gone.push_back(*strength[i].second);
  for (const auto& key : gone) terms.erase(key);
}

void SearchMemory::record(const std::vector<std::string>& terms, const std::string& tool) {
  if (!valid_tool(tool) || options_.max_terms == 0 || options_.max_tools == 0) return;
  const auto distinct = distinct_terms(terms);
  if (distinct.empty()) return;
  std::unique_lock lock(mutex_);
  const std::int64_t now = now_seconds();
  for (std::string_view key : distinct) {
    auto it = terms_.find(std::string(key));
    if (it == terms_.end()) {
      make_room(terms_, now, 1, true);
      it = terms_.emplace(std::string(key), Term{now, {}}).first;
    } else {
      refresh(it->second, now);
    }
    auto& tools = it->second.tools;
    auto known =
        std::find_if(tools.begin(), tools.end(), [&tool](const Tool& t) { return t.name == tool; });
    if (known != tools.end()) {
      known->count += 1.0;
    } else if (tools.size() < options_.max_tools) {
      tools.push_back({tool, 1.0});
    } else {
      // The weakest gives way (of equal ones, the last by name).
      auto weakest = std::min_element(tools.begin(), tools.end(), [](const Tool& x, const Tool& y) {
        return x.count != y.count ? x.count < y.count : x.name > y.name;
      });
      *weakest = {tool, 1.0};
    }
    if (outbox_on_) add_to_outbox(std::string(key), tool, 1.0);
  }
  ++changes_;
}

void SearchMemory::add_to_outbox(std::string term, const std::string& tool, double count) {
  auto key = std::make_pair(std::move(term), tool);
  if (auto it = outbox_.find(key); it != outbox_.end()) {
    it->second += count;
  } else if (outbox_.size() < outbox_limit_) {
    outbox_.emplace(std::move(key), count);
  } else {
    ++outbox_dropped_;
  }
}

void SearchMemory::keep_outbox(std::size_t limit) {
  std::unique_lock lock(mutex_);
  outbox_on_ = true;
  outbox_limit_ = limit;
}

SearchMemory::Outbox SearchMemory::take_outbox() {
  std::unique_lock lock(mutex_);
  Outbox out;
  out.swap(outbox_);
  return out;
}

void SearchMemory::return_outbox(const Outbox& clicks) {
  std::unique_lock lock(mutex_);
  if (!outbox_on_) return;
  for (const auto& [key, count] : clicks) add_to_outbox(key.first, key.second, count);
}

std::uint64_t SearchMemory::outbox_dropped() const {
  std::shared_lock lock(mutex_);
  return outbox_dropped_;
}

void SearchMemory::merge(const std::vector<SharedCount>& counts) {
  if (options_.max_terms == 0 || options_.max_tools == 0) return;
  std::unique_lock lock(mutex_);
  const std::int64_t now = now_seconds();
  bool changed = false;
  for (const SharedCount& shared : counts) {
    if (!valid_term(shared.term) || !valid_tool(shared.tool) || !std::isfinite(shared.count) ||
        shared.count < 0) {
      continue;
    }
    const double count = std::min(shared.count, kMaxCount) * decay(shared.stamp, now);
    auto it = terms_.find(shared.term);
    if (it == terms_.end()) {
      if (count < kForgottenCount) continue;
      make_room(terms_, now, 1, true);
      it = terms_.emplace(shared.term, Term{now, {}}).first;
    } else {
      refresh(it->second, now);
    }
    auto& tools = it->second.tools;
    auto known = std::find_if(tools.begin(), tools.end(),
                              [&shared](const Tool& t) { return t.name == shared.tool; });
    if (count < kForgottenCount) {
      if (known != tools.end()) tools.erase(known);
    } else if (known != tools.end()) {
      known->count = count;
    } else if (tools.size() < options_.max_tools) {
      tools.push_back({shared.tool, count});
    } else {
      auto weakest = std::min_element(tools.begin(), tools.end(), [](const Tool& x, const Tool& y) {
        return x.count != y.count ? x.count < y.count : x.name > y.name;
      });
      if (weakest->count < count) *weakest = {shared.tool, count};
    }
    if (tools.empty()) terms_.erase(it);
    changed = true;
  }
  if (changed) ++changes_;
}

SearchMemory::Boosts SearchMemory::boosts(const std::vector<std::string>& terms) const {
  Boosts out;
  const auto distinct = distinct_terms(terms);
  if (distinct.empty()) return out;
  std::shared_lock lock(mutex_);
  if (terms_.empty()) return out;
  const std::int64_t now = now_seconds();
  for (std::string_view key : distinct) {
    auto it = terms_.find(std::string(key));
    if (it == terms_.end()) continue;
    const double factor = decay(it->second.stamp, now);
    double total = 0;
    for (const Tool& tool : it->second.tools)
      if (tool.count * factor >= kForgottenCount) total += tool.count * factor;
    if (!(total + options_.smoothing > 0)) continue;
    for (const Tool& tool : it->second.tools) {
      const double count = tool.count * factor;
      if (count >= kForgottenCount) out[tool.name] += count / (total + options_.smoothing);
    }
  }
  for (auto& [name, weight] : out) weight /= static_cast<double>(distinct.size());
  return out;
}

std::vector<std::pair<std::string, double>> SearchMemory::associations(
    std::string_view term) const {
  std::vector<std::pair<std::string, double>> out;
  std::shared_lock lock(mutex_);
  auto it = terms_.find(std::string(term));
  if (it == terms_.end()) return out;
  const double factor = decay(it->second.stamp, now_seconds());
  for (const Tool& tool : it->second.tools)
    if (tool.count * factor >= kForgottenCount) out.emplace_back(tool.name, tool.count * factor);
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  return out;
}

std::size_t SearchMemory::term_count() const {
  std::shared_lock lock(mutex_);
  return terms_.size();
}

std::size_t SearchMemory::association_count() const {
  std::shared_lock lock(mutex_);
  std::size_t count = 0;
  for (const auto& [key, term] : terms_) count += term.tools.size();
  return count;
}

std::uint64_t SearchMemory::changes() const {
  std::shared_lock lock(mutex_);
  return changes_;
}

// The saved form, version 1, integers little-endian:
//   "TMSM", u16 version, i64 time saved (seconds since the epoch), u32 terms,
//   per term (by term): u8 length, the term, u16 tools, per tool (strongest
//   first): u16 length, the name, f32 count (decayed to the time saved);
//   u64 FNV-1a of everything before it.
std::string SearchMemory::to_bytes() const {
  std::shared_lock lock(mutex_);
  const std::int64_t now = now_seconds();
  std::vector<const Terms::value_type*> order;
  order.reserve(terms_.size());
  for (const auto& entry : terms_) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](auto* x, auto* y) { return x->first < y->first; });
  std::string out(kMagic);
  put(out, kVersion);
  put(out, now);
  const std::size_t count_at = out.size();
  put(out, std::uint32_t{0});
  std::uint32_t written = 0;
  std::vector<std::pair<std::string_view, double>> tools;
  for (const auto* entry : order) {
    const double factor = decay(entry->second.stamp, now);
    tools.clear();
    for (const Tool& tool : entry->second.tools)
      if (tool.count * factor >= kForgottenCount)
        tools.emplace_back(tool.name, tool.count * factor);
    if (tools.empty()) continue;
    std::sort(tools.begin(), tools.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    put(out, static_cast<std::uint8_t>(entry->first.size()));
    out += entry->first;
    put(out, static_cast<std::uint16_t>(std::min<std::size_t>(tools.size(), 0xFFFF)));
    for (std::size_t i = 0; i < tools.size() && i < 0xFFFF; ++i) {
      put(out, static_cast<std::uint16_t>(tools[i].first.size()));
      out += tools[i].first;
      put(out, static_cast<float>(std::min(tools[i].second, kMaxCount)));
    }
    ++written;
  }
  for (std::size_t i = 0; i < 4; ++i)
    out[count_at + i] = static_cast<char>((written >> (8 * i)) & 0xFFU);
  put(out, fnv1a(out));
  return out;
}

Status SearchMemory::from_bytes(std::string_view bytes) {
  if (bytes.size() > kMaxBytes) {
    return Status::resource_exhausted("the search memory is " + std::to_string(bytes.size()) +
                                      " bytes, more than the " + std::to_string(kMaxBytes) +
                                      " read");
  }
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    return damaged("only " + std::to_string(bytes.size()) + " bytes", 0);
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return Status::invalid_argument("not a search memory: it does not start with \"TMSM\"");
  }
  Reader header(bytes.substr(kMagic.size()));
  std::uint16_t version = 0;
  std::int64_t saved = 0;
  std::uint32_t count = 0;
  (void)header.get(version);
  if (version != kVersion) {
    return Status::invalid_argument("the search memory is of version " + std::to_string(version) +
                                    "; this toolmux reads version " + std::to_string(kVersion));
  }
  const std::string_view body = bytes.substr(0, bytes.size() - kChecksumBytes);
  Reader tail(bytes.substr(body.size()));
  std::uint64_t checksum = 0;
  (void)tail.get(checksum);
  if (checksum != fnv1a(body)) return damaged("its checksum does not match", body.size());

  Reader in(body);
  std::string_view skipped;
  (void)in.text(kMagic.size() + 2, skipped);
  (void)in.get(saved);
  (void)in.get(count);
  const std::int64_t now = now_seconds();
  saved = std::clamp<std::int64_t>(saved, 0, now);  // "in the future": the clock went back
  Terms loaded;
  std::string_view previous;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t term_at = in.at();
    std::uint8_t length = 0;
    std::string_view key;
    if (!in.get(length) || !in.text(length, key))
      return damaged(
          "term " + std::to_string(i + 1) + " of " + std::to_string(count) + " is cut off",
          term_at);
    if (!valid_term(key))
      return damaged("term " + std::to_string(i + 1) + " is not a term", term_at);
    if (i > 0 && key <= previous) return damaged("the terms are not in order", term_at);
    previous = key;
    std::uint16_t tool_count = 0;
    if (!in.get(tool_count))
      return damaged("term " + std::to_string(i + 1) + " is cut off", in.at());
    if (tool_count == 0) return damaged("term " + std::to_string(i + 1) + " has no tool", in.at());
    Term term{saved, {}};
    for (std::uint16_t t = 0; t < tool_count; ++t) {
      const std::size_t tool_at = in.at();
      std::uint16_t name_length = 0;
      std::string_view name;
      float value = 0;
      if (!in.get(name_length) || !in.text(name_length, name) || !in.get(value))
        return damaged("a tool of term " + std::to_string(i + 1) + " is cut off", tool_at);
      if (!valid_tool(name)) return damaged("a tool name is empty, too long or not UTF-8", tool_at);
      const double c = value;
      if (!std::isfinite(c) || c <= 0 || c > kMaxCount)
        return damaged("a count is not a number from 0 to 1e9", tool_at);
      if (std::any_of(term.tools.begin(), term.tools.end(),
                      [&](const Tool& x) { return x.name == name; }))
        return damaged("a tool is named twice for one term", tool_at);
      term.tools.push_back({std::string(name), c});
    }
    std::sort(term.tools.begin(), term.tools.end(), [](const Tool& x, const Tool& y) {
      return x.count != y.count ? x.count > y.count : x.name < y.name;
    });
    if (term.tools.size() > options_.max_tools) term.tools.resize(options_.max_tools);
    if (!term.tools.empty()) loaded.emplace(std::string(key), std::move(term));
    // A file of more terms than max_terms keeps the strongest; never more
    // than twice max_terms are held meanwhile.
    if (loaded.size() > 2 * options_.max_terms) make_room(loaded, now, 0, false);
  }
  if (in.has(1)) return damaged("bytes follow the last term", in.at());
  make_room(loaded, now, 0, false);

  std::unique_lock lock(mutex_);
  terms_ = std::move(loaded);
  ++changes_;
  return Status::ok_status();
}

}  // namespace toolmux
