#include "catalog/catalog_search.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "catalog/search_memory.h"

namespace toolmux {

const char* to_string(SearchConfidence confidence) {
  switch (confidence) {
    case SearchConfidence::high:
      return "high";
    case SearchConfidence::medium:
      return "medium";
    case SearchConfidence::low:
      break;
  }
  return "low";
}

namespace {

// One source or group: its documents (tool numbers, ascending).
struct Part {
  std::string id;  // "github" or "twilio/TwilioChatV2"
  std::string source;
  std::string line;  // one-line description
  std::vector<std::uint32_t> tools;
};

// The first sentence of `text`, on one line, at most `most` bytes (cut at a
// word, with an ellipsis).
std::string first_sentence(std::string_view text, std::size_t most) {
  std::string line;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\r' || c == '\t') {
      if (!line.empty() && line.back() != ' ') line += ' ';
      if (c == '\n' && i + 1 < text.size() && text[i + 1] == '\n') break;  // a paragraph ends
      continue;
    }
    line += c;
    if ((c == '.' || c == '!' || c == '?') &&
        (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
      break;
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.size() <= most) return line;
  std::size_t cut = line.rfind(' ', most - 3);
  if (cut == std::string::npos || cut < most / 2) cut = most - 3;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0U) == 0x80U) --cut;  // UTF-8
  return line.substr(0, cut) + "...";
}

// The group key of each tool of a large source, or nothing when no rule
// splits it usefully: the first tag when most tools have tags, else the part
// of the name before the first separator that most names have ("--", "__",
// "_", "-", ".", "/").
std::optional<std::vector<std::string>> group_keys(const ToolSearchIndex& index,
                                                   const std::vector<std::uint32_t>& tools) {
  auto documents = [&index](std::uint32_t d) -> const SearchDocument& { return index.document(d); };
  const std::size_t n = tools.size();
  auto useful = [n](const std::vector<std::string>& keys) {
    std::map<std::string_view, std::size_t> sizes;
    for (const auto& key : keys) ++sizes[key];
    return sizes.size() >= 2 && sizes.size() <= n / 3;
  };
  std::size_t tagged = 0;
  for (auto d : tools) tagged += documents(d).tags.empty() ? 0 : 1;
  if (tagged * 5 >= n * 4) {
    std::vector<std::string> keys;
    keys.reserve(n);
    for (auto d : tools)
      keys.push_back(documents(d).tags.empty() ? std::string("other") : documents(d).tags.front());
    if (useful(keys)) return keys;
  }
  for (std::string_view separator : {"--", "__", "_", "-", ".", "/"}) {
    std::size_t with = 0;
    for (auto d : tools) {
      const auto at = documents(d).name.find(separator);
      with += at != std::string::npos && at > 0 ? 1 : 0;
    }
    if (with * 5 < n * 4) continue;
    std::vector<std::string> keys;
    keys.reserve(n);
    for (auto d : tools) {
      const std::string& name = documents(d).name;
      const auto at = name.find(separator);
      keys.push_back(at != std::string::npos && at > 0 ? name.substr(0, at) : std::string("other"));
    }
    if (useful(keys)) return keys;
  }
  return std::nullopt;
}

// "12 tools, e.g. create_issue, get_issue, list_issues": the tools' names
// without the group's prefix, shortest first.
std::string example_line(const ToolSearchIndex& index, const std::vector<std::uint32_t>& tools,
                         std::string_view prefix) {
  std::vector<std::string_view> names;
  for (auto d : tools) {
    std::string_view name = index.document(d).name;
    if (!prefix.empty() && name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix) {
      name.remove_prefix(prefix.size());
      while (!name.empty() && (name.front() == '-' || name.front() == '_' || name.front() == '.' ||
                               name.front() == '/')) {
        name.remove_prefix(1);
      }
    }
    names.push_back(name);
  }
  std::stable_sort(names.begin(), names.end(), [](std::string_view x, std::string_view y) {
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string line = std::to_string(tools.size()) + (tools.size() == 1 ? " tool" : " tools");
  constexpr std::size_t kExamples = 4;
  for (std::size_t i = 0; i < names.size() && i < kExamples; ++i)
    line += (i == 0 ? ", e.g. " : ", ") + std::string(names[i]);
  return line;
}

}  // namespace

struct CatalogSearch::Impl {
  CatalogSearchOptions options;
  std::vector<Part> sources;                          // by ToolSearchIndex source number
  std::vector<Part> groups;                           // of every split source, by source then name
  std::vector<std::uint32_t> group_of;                // by tool: index into groups, or kNone
  std::vector<std::vector<std::uint32_t>> groups_of;  // by source: its groups
  std::shared_ptr<const ToolSearchIndex> source_index;                    // document i = sources[i]
  std::shared_ptr<const ToolSearchIndex> group_index;                     // document i = groups[i]
  std::unordered_map<std::string, std::pair<bool, std::uint32_t>> by_id;  // id -> (group?, index)
  static constexpr std::uint32_t kNone = 0xFFFFFFFFU;
  std::string empty;
  // Tools by name, for what the memory brings: made at its first use.
  mutable std::once_flag by_name_once;
  mutable std::vector<std::pair<std::string_view, std::uint32_t>> by_name;
};

CatalogSearch::CatalogSearch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CatalogSearch::~CatalogSearch() = default;

std::shared_ptr<const CatalogSearch> CatalogSearch::build(std::vector<SearchDocument> documents,
                                                          const std::vector<SourceInfo>& sources,
                                                          CatalogSearchOptions options) {
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.options = std::move(options);
  // The sources' own words, a field of each of their tools.
  std::map<std::string_view, std::shared_ptr<const std::string>> own_words;
  for (const auto& source : sources) {
    std::string text = source.title;
    if (!source.description.empty()) text += (text.empty() ? "" : "\n") + source.description;
    if (!text.empty()) own_words.emplace(source.name, std::make_shared<const std::string>(text));
  }
  for (auto& doc : documents) {
    if (auto it = own_words.find(doc.source); it != own_words.end()) doc.source_text = it->second;
  }
  auto tools = ToolSearchIndex::build(std::move(documents), s.options.tools);
  const std::size_t n = tools->size();

  s.sources.resize(tools->source_count());
  for (std::size_t d = 0; d < n; ++d) {
    Part& part = s.sources[tools->source_number(d)];
    part.id = part.source = tools->document(d).source;
    part.tools.push_back(static_cast<std::uint32_t>(d));
  }
  std::map<std::string_view, const SourceInfo*> info;
  for (const auto& source : sources) info.emplace(source.name, &source);

  // Groups of the large sources.
  s.group_of.assign(n, Impl::kNone);
  s.groups_of.resize(s.sources.size());
  std::vector<std::pair<std::string, std::string>> group_prefix;  // by group: (id, name prefix)
  for (std::size_t i = 0; i < s.sources.size(); ++i) {
    const Part& source = s.sources[i];
    if (source.tools.size() <= s.options.group_threshold) continue;
    auto split = group_keys(*tools, source.tools);
    if (!split) continue;
    std::map<std::string, std::vector<std::uint32_t>> members;
    for (std::size_t k = 0; k < source.tools.size(); ++k)
      members[(*split)[k]].push_back(source.tools[k]);
    for (auto& [key, tool_numbers] : members) {
      const auto g = static_cast<std::uint32_t>(s.groups.size());
      Part group;
      group.id = source.id + "/" + key;
      group.source = source.id;
      group.tools = std::move(tool_numbers);
      for (auto d : group.tools) s.group_of[d] = g;
      s.groups_of[i].push_back(g);
      group_prefix.emplace_back(group.id, key);
      s.groups.push_back(std::move(group));
    }
  }

  // One-line descriptions.
  constexpr std::size_t kLine = 160;
  for (Part& source : s.sources) {
    auto it = info.find(source.id);
    std::string own;
    if (it != info.end()) {
      own = it->second->title;
      const std::string sentence = first_sentence(it->second->description, kLine);
      if (!sentence.empty()) own += (own.empty() ? "" : ": ") + sentence;
    }
    source.line = own.empty() ? example_line(*tools, source.tools, "") : own;
  }
  for (std::size_t g = 0; g < s.groups.size(); ++g)
    s.groups[g].line = example_line(*tools, s.groups[g].tools, group_prefix[g].second);

  // Sources and groups as documents.
  auto part_document = [&](const Part& part, const SourceInfo* own) {
    SearchDocument doc;
    doc.source = part.id;
    doc.name = part.id;
    if (own != nullptr) {
      doc.title = own->title;
      doc.description = own->description;
    }
    if (s.options.source_documents_include_tools) {
      for (auto d : part.tools) {
        const SearchDocument& tool = tools->document(d);
        if (!s.options.source_documents_include_descriptions) {
          doc.parameters.emplace_back(tool.name, tool.title);
        } else {
          doc.parameters.emplace_back(tool.name, tool.title.empty()
                                                     ? tool.description
                                                     : tool.title + ". " + tool.description);
        }
      }
    }
    return doc;
  };
  SearchOptions part_options = s.options.tools;
  part_options.b = s.options.source_b;
  part_options.damp_boilerplate = false;  // each document is its own source
  part_options.source_boost = 0;
  std::vector<SearchDocument> source_docs;
  for (const Part& source : s.sources) {
    auto it = info.find(source.id);
    source_docs.push_back(part_document(source, it != info.end() ? it->second : nullptr));
  }
  std::vector<SearchDocument> group_docs;
  for (const Part& group : s.groups) {
    SearchDocument doc = part_document(group, nullptr);
    doc.source = group.source;  // so that a search can keep to one source's groups
    group_docs.push_back(std::move(doc));
  }
  // The two are about as large (every tool's name each): one is built on a
  // second thread, which halves their share of a large catalog's build.
  auto groups_built = std::async(std::launch::async, [&group_docs, &part_options] {
    return ToolSearchIndex::build(std::move(group_docs), part_options);
  });
  s.source_index = ToolSearchIndex::build(std::move(source_docs), part_options);
  s.group_index = groups_built.get();

  for (std::size_t i = 0; i < s.sources.size(); ++i)
    s.by_id.emplace(s.sources[i].id, std::make_pair(false, static_cast<std::uint32_t>(i)));
  for (std::size_t g = 0; g < s.groups.size(); ++g)
    s.by_id.emplace(s.groups[g].id, std::make_pair(true, static_cast<std::uint32_t>(g)));

  auto search = std::make_shared<CatalogSearch>(std::move(impl));
  search->tools_ = std::move(tools);
  return search;
}

bool CatalogSearch::has_source(std::string_view id) const {
  return impl_->by_id.count(std::string(id)) > 0;
}

const std::string& CatalogSearch::source_of(std::size_t document) const {
  return impl_->sources[tools_->source_number(document)].id;
}

const std::string& CatalogSearch::group_of(std::size_t document) const {
  const auto g = impl_->group_of.at(document);
  return g == Impl::kNone ? impl_->empty : impl_->groups[g].id;
}

std::vector<double> CatalogSearch::source_scores(std::string_view text) const {
  const Impl& s = *impl_;
  std::vector<double> scores(s.sources.size(), 0.0);
  const auto hits = s.source_index->search(text, s.sources.size());
  if (hits.empty() || !(hits.front().score > 0)) return scores;
  for (const auto& hit : hits) scores[hit.document] = hit.score / hits.front().score;
  return scores;
}

namespace {

std::size_t count_allowed(const std::vector<std::uint32_t>& tools,
                          const std::function<bool(std::size_t)>& allowed) {
  if (!allowed) return tools.size();
  std::size_t count = 0;
  for (auto d : tools) count += allowed(d) ? 1 : 0;
  return count;
}

}  // namespace

std::vector<SourceMatch> CatalogSearch::outline(
    std::string_view source, const std::function<bool(std::size_t)>& allowed) const {
  const Impl& s = *impl_;
  std::vector<SourceMatch> out;
  if (source.empty()) {
    for (std::size_t i = 0; i < s.sources.size(); ++i) {
      const Part& part = s.sources[i];
      const std::size_t count = count_allowed(part.tools, allowed);
      if (count > 0) out.push_back({part.id, part.line, count, s.groups_of[i].size(), 0});
    }
    return out;
  }
  auto it = s.by_id.find(std::string(source));
  if (it == s.by_id.end() || it->second.first) return out;
  for (auto g : s.groups_of[it->second.second]) {
    const Part& part = s.groups[g];
    const std::size_t count = count_allowed(part.tools, allowed);
    if (count > 0) out.push_back({part.id, part.line, count, 0, 0});
  }
  return out;
}

CatalogSearchAnswer CatalogSearch::search(const CatalogSearchRequest& request) const {
  const Impl& s = *impl_;
  const CatalogSearchOptions& opt = s.options;
  CatalogSearchAnswer answer;
  if (request.limit == 0) return answer;

  // Which tools: the caller's, within the source or group asked for.
  std::function<bool(std::size_t)> allowed = request.allowed;
  bool narrowed = false;
  if (!request.source.empty()) {
    auto it = s.by_id.find(request.source);
    if (it == s.by_id.end()) return answer;
    narrowed = true;
    const bool group = it->second.first;
    const std::uint32_t index = it->second.second;
    allowed = [this, group, index, inner = request.allowed](std::size_t d) {
      const bool inside = group ? impl_->group_of[d] == index : tools_->source_number(d) == index;
      return inside && (!inner || inner(d));
    };
  }

  // Every phrasing's first hits, by its own words: one search each.
  std::vector<std::string_view> phrasings{request.query};
  for (const auto& alternative : request.alternatives)
    if (!alternative.empty()) phrasings.push_back(alternative);
  const ToolSearchIndex& index = *tools_;
  const std::size_t depth =
      std::max({request.limit, opt.source_hits, phrasings.size() > 1 ? opt.fusion_depth : 0});
  std::vector<std::vector<ToolSearchIndex::Hit>> ranked;
  ranked.reserve(phrasings.size());
  double sureness = 0;  // the best hit's share of the most its phrasing could score
  for (auto p : phrasings) {
    ranked.push_back(index.search(p, depth, allowed));
    const double ceiling = index.ceiling(p);
    if (!ranked.back().empty() && ceiling > 0)
      sureness = std::max(sureness, ranked.back().front().score / ceiling);
  }

  // The sources, by their own document and by their best tools: needed to
  // scale the tools by their source, and to name sources; an answer sure of
  // itself that names none (tool_search's) skips them.
  const double prior = phrasings.size() > 1 ? opt.source_prior_alternatives : opt.source_prior;
  const bool scaled = !narrowed && prior > 0;
  const bool sure = sureness >= opt.high_confidence;  // implies a hit
  const bool names_sources = request.sources == CatalogSearchRequest::Sources::always || !sure;
  std::string all_words;
  for (auto p : phrasings) all_words.append(p).push_back('\n');
  std::vector<double> source_score(s.sources.size(), 0.0);
  std::vector<double> best_in_group(s.groups.size(), 0.0);
  if (scaled || names_sources) {
    source_score = source_scores(all_words);
    std::vector<double> best_tool(s.sources.size(), 0.0);  // per source, over all phrasings
    for (const auto& hits : ranked) {
      const std::size_t counted = std::min(hits.size(), opt.source_hits);
      for (std::size_t r = 0; r < counted; ++r) {
        const auto d = hits[r].document;
        auto& best = best_tool[index.source_number(d)];
        best = std::max(best, hits[r].score);
        if (const auto g = s.group_of[d]; g != Impl::kNone)
          best_in_group[g] = std::max(best_in_group[g], hits[r].score);
      }
    }
    if (opt.source_from_hits > 0) {
      const double top = *std::max_element(best_tool.begin(), best_tool.end());
      for (std::size_t i = 0; i < source_score.size(); ++i) {
        source_score[i] = (1.0 - opt.source_from_hits) * source_score[i] +
                          (top > 0 ? opt.source_from_hits * best_tool[i] / top : 0.0);
      }
    }
  }

  // Each phrasing's ranking, its scores scaled by its source's, fused by
  // reciprocal rank when there are several.
  auto by_score = [&index](const ToolSearchIndex::Hit& x, const ToolSearchIndex::Hit& y) {
    if (x.score != y.score) return x.score > y.score;
    return index.document(x.document).name < index.document(y.document).name;
  };
  for (auto& hits : ranked) {
    if (!scaled) break;
    for (auto& hit : hits)
      hit.score *= 1.0 + prior * source_score[index.source_number(hit.document)];
    std::stable_sort(hits.begin(), hits.end(), by_score);
  }
  if (phrasings.size() == 1) {
    answer.hits = std::move(ranked.front());
  } else {
    std::map<std::size_t, double> fused;
    for (std::size_t p = 0; p < ranked.size(); ++p) {
      const double weight = p == 0 ? opt.query_weight : 1.0;
      const std::size_t counted = std::min(ranked[p].size(), opt.fusion_depth);
      // Tools of equal score share a rank (the best of theirs): the order
      // among them is only by name, which must not count as a preference.
      std::size_t rank = 1;
      for (std::size_t r = 0; r < counted; ++r) {
        if (r > 0 && ranked[p][r].score < ranked[p][r - 1].score) rank = r + 1;
        fused[ranked[p][r].document] += weight / (opt.rrf_k + static_cast<double>(rank));
      }
    }
    for (const auto& [d, score] : fused) answer.hits.push_back({d, score});
    std::stable_sort(answer.hits.begin(), answer.hits.end(), by_score);
  }
  // What earlier searches and the calls after them taught: a boost to the
  // tools clicked for these words, and the strongest of them brought in.
  if (request.memory != nullptr && opt.learned_weight > 0) {
    const SearchMemory::Boosts boosts = request.memory->boosts(SearchMemory::terms(request.query));
    const double top = answer.hits.empty() ? 1.0 : answer.hits.front().score;
    std::vector<std::string_view> boosted;
    for (auto& hit : answer.hits) {
      const std::string& name = index.document(hit.document).name;
      if (auto it = boosts.find(name); it != boosts.end()) {
        hit.score += opt.learned_weight * it->second * top;
        boosted.push_back(name);
      }
    }
    for (const auto& [name, boost] : boosts) {
      if (boost < opt.learned_pull || !(opt.learned_pull > 0) ||
          std::find(boosted.begin(), boosted.end(), name) != boosted.end()) {
        continue;
      }
      std::call_once(s.by_name_once, [&] {
        for (std::size_t d = 0; d < index.size(); ++d)
          s.by_name.emplace_back(index.document(d).name, static_cast<std::uint32_t>(d));
        std::sort(s.by_name.begin(), s.by_name.end());
      });
      const std::string_view key = name;
      for (auto it = std::lower_bound(s.by_name.begin(), s.by_name.end(),
                                      std::make_pair(key, std::uint32_t{0}));
           it != s.by_name.end() && it->first == key; ++it) {
        if (!allowed || allowed(it->second))
          answer.hits.push_back({it->second, opt.learned_weight * boost * top});
      }
    }
    std::stable_sort(answer.hits.begin(), answer.hits.end(), by_score);
  }

  if (answer.hits.size() > request.limit) answer.hits.resize(request.limit);
  if (!answer.hits.empty()) {
    answer.confidence = sureness >= opt.high_confidence         ? SearchConfidence::high
                        : sureness >= opt.high_confidence / 2.0 ? SearchConfidence::medium
                                                                : SearchConfidence::low;
  }

  if (!names_sources) return answer;
  // The sources that match best, and the best groups of a split one: by
  // their best tools, or by their own document when no tool of theirs came up.
  constexpr std::size_t kSources = 3;
  constexpr std::size_t kGroups = 3;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < s.sources.size(); ++i)
    if (source_score[i] > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return source_score[x] > source_score[y]; });
  std::size_t named = 0;
  for (std::size_t i : order) {
    if (named >= kSources) break;
    const Part& part = s.sources[i];
    if (narrowed && request.source != part.id &&
        request.source.compare(0, part.id.size() + 1, part.id + "/") != 0) {
      continue;
    }
    const std::size_t count = count_allowed(part.tools, request.allowed);
    if (count == 0) continue;
    ++named;
    answer.sources.push_back({part.id, part.line, count, s.groups_of[i].size(), source_score[i]});
    if (s.groups_of[i].empty()) continue;
    std::vector<std::pair<double, std::uint32_t>> groups;
    for (auto g : s.groups_of[i])
      if (best_in_group[g] > 0) groups.emplace_back(best_in_group[g], g);
    if (groups.empty()) {
      for (const auto& hit : s.group_index->search(
               all_words, kGroups, [&](std::size_t g) { return s.groups[g].source == part.id; })) {
        groups.emplace_back(hit.score, static_cast<std::uint32_t>(hit.document));
      }
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    std::size_t shown = 0;
    for (const auto& [group_score, g] : groups) {
      if (shown == kGroups) break;
      const Part& group = s.groups[g];
      const std::size_t in_group = count_allowed(group.tools, request.allowed);
      if (in_group == 0) continue;
      ++shown;
      answer.sources.push_back({group.id, group.line, in_group, 0,
                                source_score[i] * group_score / groups.front().first});
    }
  }
  return answer;
}

std::size_t CatalogSearch::memory_bytes() const {
  const Impl& s = *impl_;
  std::size_t bytes = sizeof(*this) + sizeof(Impl) + tools_->memory_bytes() +
                      s.source_index->memory_bytes() + s.group_index->memory_bytes();
  bytes += s.group_of.capacity() * sizeof(std::uint32_t);
  for (const auto* parts : {&s.sources, &s.groups}) {
    for (const Part& part : *parts)
      bytes += sizeof(Part) + part.id.capacity() + part.source.capacity() + part.line.capacity() +
               part.tools.capacity() * sizeof(std::uint32_t);
  }
  return bytes;
}

}  // namespace toolmux
