#include "catalog/tool_search_index.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace toolmux {
namespace {

using nlohmann::json;

using text::is_stop_word;
using text::tokenize_name;
using text::tokenize_text;

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

enum Field : std::uint8_t {
  kName,
  kTitle,
  kDescription,
  kParameterName,
  kParameterDescription,
  kEnum,
  kTags,
  kSourceText,
  kFieldCount  // at most 8: a field takes 3 bits while building
};
static_assert(kFieldCount <= 8);

constexpr std::array<const char*, kFieldCount> kFieldNames = {
    "name", "title", "description", "parameter name", "parameter description",
    "enum", "tags",  "source"};

std::size_t string_bytes(const std::string& s) {
  return sizeof(std::string) + (s.capacity() > 15 ? s.capacity() + 1 : 0);
}

}  // namespace

SearchOptions SearchOptions::plain_bm25() {
  SearchOptions options;
  options.name_weight = options.title_weight = options.description_weight = 1.0;
  options.parameter_name_weight = options.parameter_description_weight = options.enum_weight = 1.0;
  options.tag_weight = 1.0;
  options.source_text_weight = 1.0;
  options.k1 = 1.2;
  options.b = 0.75;
  options.stem = false;
  options.split_names = false;
  options.damp_boilerplate = false;
  options.synonyms.clear();
  options.use_default_synonyms = false;
  options.source_boost = 0;
  options.single_field = true;
  return options;
}

// ---------------------------------------------------------------------------
// The index.
//
// Scoring (BM25F, one saturation): for a document d and an index term t,
//
//   wtf(d, t)  = damp(source(d), t) * sum over fields f of
//                  w_f * tf_f(d, t) / (1 - b + b * len_f(d) / avglen_f)
//   score(d)   = sum over query terms t of
//                  q(t) * idf(t) * wtf(d, t) * (k1 + 1) / (wtf(d, t) + k1)
//   idf(t)     = log((N - df(t) + 0.5) / (df(t) + 0.5) + 1)
//
// where len_f(d) counts the words of field f (joined name forms included),
// avglen_f is the mean of len_f over the documents whose field f is not empty
// (titles and enums are rare: a mean over all documents would crush them),
// df(t) counts the documents containing t in any field, and q(t) is 1 for a
// query word and expansion_weight for a synonym (the largest when both),
// times min(1, idf(word) / idf(t)) when the word is a term of the catalog
// (cap_synonym_idf: a synonym never outweighs the word it stands for).
//
// Boilerplate damping: for a source s with n_s >= 20 documents, of which
// df_s(t) contain t, with share = df_s(t) / n_s,
//
//   damp(s, t) = 1                          when share <= 0.5
//              = 1 - 0.9 * (share - 0.5) / 0.5   otherwise (0.1 at share 1)
//
// and damp is 1 for smaller sources and for the terms of s's own name (its
// name analysed as a tool name: "github_rest" gives github, rest, githubrest).
// Everything but q(t) is known at build time, so a posting holds idf-free
// saturated weight wtf * (k1+1)/(wtf+k1) and a query only adds
// q(t) * idf(t) * weight for each posting of its terms.
//
// Source boost: when a query term, or a synonym of one, is a term of a
// source's name, the score of that source's documents is multiplied by
// 1 + source_boost.
struct ToolSearchIndex::Impl {
  SearchOptions options;
  StringMap<std::uint32_t> vocabulary;       // stemmed term -> id
  std::vector<float> idf;                    // by term id
  std::vector<std::uint32_t> posting_start;  // by term id, size terms + 1
  std::vector<std::uint32_t> posting_document;
  std::vector<float> posting_weight;
  std::vector<std::uint32_t> name_rank;  // by document: its place in name order
  std::vector<std::uint32_t> source_of;  // by document: its source's number
  // Stemmed synonym key -> the terms it also matches, and the sources they name.
  struct Expansion {
    std::vector<std::uint32_t> terms;
    std::vector<std::uint32_t> sources;
  };
  StringMap<Expansion> expansions;
  StringMap<std::vector<std::uint32_t>> source_terms;  // term of a source name -> sources
  std::size_t sources = 0;
  // For explain(): what the postings' weights were computed from.
  std::array<double, 8> field_weight{};
  std::array<double, 8> mean_length{};
  std::vector<std::uint32_t> field_length;  // by document * kFieldCount + field
  std::vector<std::vector<std::pair<std::uint32_t, float>>> damped;  // by source, sorted by term

  // The options' stem and split_names (the index and its queries analyse alike).
  text::TextAnalyzer analyzer;
};

namespace {

// q(t) of a synonym t of a query word (see the top of this file): the
// expansion weight, times idf(word) / idf(t) when t is the rarer and `cap`
// is on; `word_idf` is null when the word is not a term of the catalog.
float synonym_weight(bool cap, float expansion, const float* word_idf, float synonym_idf) {
  if (!cap || word_idf == nullptr || !(synonym_idf > *word_idf)) return expansion;
  return expansion * (*word_idf / synonym_idf);
}

struct Entry {  // one (term, field) of one document, while building
  std::uint32_t term;
  std::uint16_t count;
  std::uint8_t field;
};

// Lower-case word -> value, for the build: an open-addressing table over one
// string arena (the build looks up every word of every document here, and
// stems and checks stop words only for words it has not seen).
class WordCache {
 public:
  static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();

  WordCache() : slots_(1024) {}

  static std::uint64_t hash(std::string_view word) {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (char c : word) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ULL;
    }
    return h ^ (h >> 29U);
  }

  // The value of `word`, or kEmpty.
  std::uint32_t find(std::string_view word, std::uint64_t h) const {
    for (std::size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& slot = slots_[i];
      if (slot.value == kEmpty) return kEmpty;
      if (slot.hash == h && slot.length == word.size() &&
          std::string_view(arena_).substr(slot.offset, slot.length) == word)
        return slot.value;
    }
  }

  void insert(std::string_view word, std::uint64_t h, std::uint32_t value) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    place({h, arena_.size(), static_cast<std::uint32_t>(word.size()), value});
    arena_.append(word);
    ++used_;
  }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::size_t offset = 0;
    std::uint32_t length = 0;
    std::uint32_t value = kEmpty;
  };

  void place(const Slot& entry) {
    std::size_t i = entry.hash & (slots_.size() - 1);
    while (slots_[i].value != kEmpty) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = entry;
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& slot : old)
      if (slot.value != kEmpty) place(slot);
  }

  std::vector<Slot> slots_;
  std::string arena_;
  std::size_t used_ = 0;
};

struct QueryTerm {
  std::uint32_t term;
  float weight;
};

struct Candidate {
  float score;
  std::uint32_t rank;  // name rank
  std::uint32_t document;
};

// Better first: higher score, then earlier name.
bool better(const Candidate& a, const Candidate& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.rank < b.rank;
}

struct QueryScratch {
  std::vector<float> scores;
  std::vector<std::uint32_t> touched;
  std::vector<Candidate> heap;
  std::vector<QueryTerm> terms;
  std::vector<std::uint32_t> named_sources;
};

}  // namespace

ToolSearchIndex::ToolSearchIndex(std::vector<SearchDocument> documents, std::unique_ptr<Impl> impl)
    : documents_(std::move(documents)), impl_(std::move(impl)) {}

ToolSearchIndex::~ToolSearchIndex() = default;

std::shared_ptr<const ToolSearchIndex> ToolSearchIndex::build(std::vector<SearchDocument> documents,
                                                              SearchOptions options) {
  if (documents.size() >= std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("ToolSearchIndex: too many documents");
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->analyzer = text::TextAnalyzer{impl->options.stem, impl->options.split_names};
  Impl& ix = *impl;
  const SearchOptions& opt = ix.options;
  const std::size_t n = documents.size();

  // Pass 1: analyse every field of every document into (term, field, count)
  // entries, building the vocabulary. Analysis of a word is cached by its
  // lower-case form (stemming is the slow part).
  // lower-case word -> term id, with kStopBit set when the word is a stop word
  WordCache word_terms;
  constexpr std::uint32_t kStopBit = 1U << 31U;
  constexpr std::uint32_t kMaxTerms = 1U << 28U;  // a term id and a field fit in 32 bits
  std::string term;
  auto word_value = [&](std::string_view word) {
    const std::uint64_t h = WordCache::hash(word);
    std::uint32_t value = word_terms.find(word, h);
    if (value != WordCache::kEmpty) return value;
    ix.analyzer.term_of(word, term);
    auto [it, inserted] =
        ix.vocabulary.try_emplace(term, static_cast<std::uint32_t>(ix.vocabulary.size()));
    if (ix.vocabulary.size() >= kMaxTerms)
      throw std::length_error("ToolSearchIndex: too many terms");
    value = it->second | (is_stop_word(word) ? kStopBit : 0U);
    word_terms.insert(word, h, value);
    return value;
  };

  std::vector<std::uint32_t> field_length(n * kFieldCount, 0);
  std::vector<Entry> entries;
  std::vector<std::size_t> entry_start(n + 1, 0);
  std::vector<std::uint32_t> scratch;  // term << 3 | field, for each word of one document
  std::string buffer;
  std::vector<std::pair<std::size_t, std::size_t>> parts;

  auto add_text = [&](std::string_view text, bool is_name, std::uint8_t field) {
    if (opt.single_field) field = kName;
    std::size_t before = scratch.size();
    if (is_name && opt.split_names) {
      tokenize_name(text, buffer, parts, [&](std::string_view word, bool) {
        scratch.push_back((word_value(word) & ~kStopBit) << 3U | field);
      });
    } else {
      tokenize_text(text, !opt.split_names, buffer, [&](std::string_view word, bool) {
        const std::uint32_t value = word_value(word);
        if (!is_name && (value & kStopBit) != 0) return;
        scratch.push_back((value & ~kStopBit) << 3U | field);
      });
    }
    return scratch.size() - before;
  };

  for (std::size_t d = 0; d < n; ++d) {
    const SearchDocument& doc = documents[d];
    scratch.clear();
    std::array<std::size_t, kFieldCount> length{};
    auto add = [&](std::string_view text, bool is_name, Field field) {
      length[opt.single_field ? kName : field] += add_text(text, is_name, field);
    };
    add(doc.name, true, kName);
    add(doc.title, false, kTitle);
    add(doc.description, false, kDescription);
    for (const auto& [name, description] : doc.parameters) {
      add(name, true, kParameterName);
      add(description, false, kParameterDescription);
    }
    for (const auto& value : doc.enum_values) add(value, true, kEnum);
    for (const auto& tag : doc.tags) add(tag, true, kTags);
    if (doc.source_text) add(*doc.source_text, false, kSourceText);
    for (std::size_t f = 0; f < kFieldCount; ++f)
      field_length[d * kFieldCount + f] = static_cast<std::uint32_t>(length[f]);

    std::sort(scratch.begin(), scratch.end());
    for (std::size_t i = 0; i < scratch.size();) {
      std::size_t j = i;
      while (j < scratch.size() && scratch[j] == scratch[i]) ++j;
      const auto count = static_cast<std::uint16_t>(
          std::min<std::size_t>(j - i, std::numeric_limits<std::uint16_t>::max()));
      entries.push_back({scratch[i] >> 3U, count, static_cast<std::uint8_t>(scratch[i] & 7U)});
      i = j;
    }
    entry_start[d + 1] = entries.size();
  }
  word_terms = WordCache();
  const std::size_t terms = ix.vocabulary.size();

  // Mean field lengths, over the documents where the field is not empty.
  std::array<double, kFieldCount> mean_length{};
  for (std::size_t f = 0; f < kFieldCount; ++f) {
    double total = 0;
    std::size_t with_field = 0;
    for (std::size_t d = 0; d < n; ++d) {
      if (std::uint32_t len = field_length[d * kFieldCount + f]; len > 0) {
        total += len;
        ++with_field;
      }
    }
    mean_length[f] = with_field > 0 ? total / static_cast<double>(with_field) : 1.0;
  }

  // Pass 2: document frequencies, overall and per source (for damping).
  // A source's own words are in every one of its tools: they count once for
  // the source, not once per tool, or they would lower the idf of the words
  // the source shares with its tools (in a catalog of one source, of all).
  // (A term's source-text entry sorts after its other fields' entries.)
  std::vector<std::uint32_t> df(terms, 0);
  std::vector<std::uint32_t> posted(terms, 0);  // documents with a posting of the term
  std::set<const std::string*> source_texts;
  for (std::size_t d = 0; d < n; ++d) {
    for (std::size_t e = entry_start[d]; e < entry_start[d + 1]; ++e) {
      if (e != entry_start[d] && entries[e].term == entries[e - 1].term) continue;
      ++posted[entries[e].term];
      if (entries[e].field != kSourceText) ++df[entries[e].term];
    }
    if (documents[d].source_text) source_texts.insert(documents[d].source_text.get());
  }
  std::vector<std::uint32_t> in_text;
  for (const std::string* text : source_texts) {
    in_text.clear();
    ix.analyzer.analyze(*text, false, [&](std::string_view t) {
      if (auto it = ix.vocabulary.find(t); it != ix.vocabulary.end()) in_text.push_back(it->second);
    });
    std::sort(in_text.begin(), in_text.end());
    in_text.erase(std::unique(in_text.begin(), in_text.end()), in_text.end());
    for (std::uint32_t t : in_text) ++df[t];
  }

  StringMap<std::uint32_t> source_ids;
  std::vector<std::uint32_t>& source_of = ix.source_of;
  source_of.resize(n);
  std::vector<std::vector<std::uint32_t>> source_documents;
  for (std::size_t d = 0; d < n; ++d) {
    auto [it, inserted] =
        source_ids.try_emplace(documents[d].source, static_cast<std::uint32_t>(source_ids.size()));
    if (inserted) source_documents.emplace_back();
    source_of[d] = it->second;
    source_documents[it->second].push_back(static_cast<std::uint32_t>(d));
  }
  // The terms of each source's name, and for each source the ids of those
  // the vocabulary has (never damped in that source's documents).
  std::vector<std::vector<std::uint32_t>> own_name_terms(source_documents.size());
  for (const auto& entry : source_ids) {
    const std::string& source = entry.first;
    const auto id = entry.second;
    ix.analyzer.analyze(source, true, [&](std::string_view t) {
      auto& sources = ix.source_terms[std::string(t)];
      if (std::find(sources.begin(), sources.end(), id) == sources.end()) sources.push_back(id);
      if (auto it = ix.vocabulary.find(t); it != ix.vocabulary.end())
        own_name_terms[id].push_back(it->second);
    });
  }
  // Damped terms of each source, sorted by term.
  ix.sources = source_documents.size();
  auto& damped = ix.damped;
  damped.resize(source_documents.size());
  constexpr std::size_t kMinSourceDocuments = 20;
  constexpr double kFreeShare = 0.5;
  constexpr double kFloor = 0.1;
  if (opt.damp_boilerplate) {
    std::vector<std::uint32_t> source_df(terms, 0);
    std::vector<std::uint32_t> touched;
    for (std::size_t s = 0; s < source_documents.size(); ++s) {
      const auto& docs = source_documents[s];
      if (docs.size() < kMinSourceDocuments) continue;
      touched.clear();
      for (std::uint32_t d : docs) {
        for (std::size_t e = entry_start[d]; e < entry_start[d + 1]; ++e) {
          if (e != entry_start[d] && entries[e].term == entries[e - 1].term) continue;
          if (entries[e].field == kSourceText) continue;  // the source's words are not boilerplate
          if (source_df[entries[e].term]++ == 0) touched.push_back(entries[e].term);
        }
      }
      std::sort(touched.begin(), touched.end());
      const auto& own = own_name_terms[s];
      for (std::uint32_t t : touched) {
        const double share = source_df[t] / static_cast<double>(docs.size());
        if (share > kFreeShare && std::find(own.begin(), own.end(), t) == own.end()) {
          const double factor = 1.0 - (1.0 - kFloor) * (share - kFreeShare) / (1.0 - kFreeShare);
          damped[s].emplace_back(t, static_cast<float>(factor));
        }
        source_df[t] = 0;
      }
    }
  }

  // Pass 3: postings, in document order within each term.
  ix.posting_start.assign(terms + 1, 0);
  for (std::size_t t = 0; t < terms; ++t) ix.posting_start[t + 1] = ix.posting_start[t] + posted[t];
  const std::size_t postings = ix.posting_start[terms];
  ix.posting_document.resize(postings);
  ix.posting_weight.resize(postings);
  std::vector<std::uint32_t> cursor(ix.posting_start.begin(), ix.posting_start.end() - 1);

  auto& weight = ix.field_weight;
  weight[kName] = opt.single_field ? 1.0 : opt.name_weight;
  weight[kTitle] = opt.title_weight;
  weight[kDescription] = opt.description_weight;
  weight[kParameterName] = opt.parameter_name_weight;
  weight[kParameterDescription] = opt.parameter_description_weight;
  weight[kEnum] = opt.enum_weight;
  weight[kTags] = opt.tag_weight;
  weight[kSourceText] = opt.source_text_weight;
  const double k1 = opt.k1;
  const double b = opt.b;
  for (std::size_t d = 0; d < n; ++d) {
    std::array<double, kFieldCount> norm{};
    for (std::size_t f = 0; f < kFieldCount; ++f)
      norm[f] = weight[f] / (1.0 - b + b * field_length[d * kFieldCount + f] / mean_length[f]);
    const auto& damp = damped[source_of[d]];
    auto damp_it = damp.begin();
    for (std::size_t e = entry_start[d]; e < entry_start[d + 1];) {
      const std::uint32_t t = entries[e].term;
      double wtf = 0;
      for (; e < entry_start[d + 1] && entries[e].term == t; ++e)
        wtf += norm[entries[e].field] * entries[e].count;
      while (damp_it != damp.end() && damp_it->first < t) ++damp_it;
      if (damp_it != damp.end() && damp_it->first == t) wtf *= damp_it->second;
      const std::uint32_t at = cursor[t]++;
      ix.posting_document[at] = static_cast<std::uint32_t>(d);
      // Never 0 (a term only in fields of weight 0): search() counts a
      // document as new while its score is 0.
      constexpr double kMinWeight = 1e-6;
      ix.posting_weight[at] =
          static_cast<float>(std::max(wtf * (k1 + 1.0) / (wtf + k1), kMinWeight));
    }
  }

  ix.idf.resize(terms);
  for (std::size_t t = 0; t < terms; ++t) {
    const double dft = df[t];
    ix.idf[t] =
        static_cast<float>(std::log((static_cast<double>(n) - dft + 0.5) / (dft + 0.5) + 1.0));
  }

  // Name order, for ties.
  std::vector<std::uint32_t> by_name(n);
  for (std::size_t d = 0; d < n; ++d) by_name[d] = static_cast<std::uint32_t>(d);
  std::sort(by_name.begin(), by_name.end(), [&](std::uint32_t x, std::uint32_t y) {
    const int c = documents[x].name.compare(documents[y].name);
    return c != 0 ? c < 0 : x < y;
  });
  ix.name_rank.resize(n);
  for (std::size_t r = 0; r < n; ++r) ix.name_rank[by_name[r]] = static_cast<std::uint32_t>(r);

  // Synonyms: keys by their term, values analysed as query words, kept when
  // the index has them or they name a source. The catalog's entries replace
  // the built-in ones of the same term.
  const auto words_of_key =
      text::synonyms_by_term(ix.analyzer, opt.synonyms, opt.use_default_synonyms);
  for (const auto& [key, words] : words_of_key) {
    Impl::Expansion expansion;
    for (std::string_view word : words) {
      ix.analyzer.analyze_query(word, [&](std::string_view, std::string_view t) {
        if (auto it = ix.vocabulary.find(t); it != ix.vocabulary.end())
          expansion.terms.push_back(it->second);
        if (auto it = ix.source_terms.find(t); it != ix.source_terms.end())
          expansion.sources.insert(expansion.sources.end(), it->second.begin(), it->second.end());
      });
    }
    for (auto* ids : {&expansion.terms, &expansion.sources}) {
      std::sort(ids->begin(), ids->end());
      ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    }
    if (!expansion.terms.empty() || !expansion.sources.empty())
      ix.expansions.emplace(key, std::move(expansion));
  }

  std::copy(mean_length.begin(), mean_length.end(), ix.mean_length.begin());
  ix.field_length = std::move(field_length);
  return std::shared_ptr<const ToolSearchIndex>(
      new ToolSearchIndex(std::move(documents), std::move(impl)));
}

std::vector<ToolSearchIndex::Hit> ToolSearchIndex::search(
    std::string_view query, std::size_t limit,
    const std::function<bool(std::size_t)>& allowed) const {
  return search_scaled(query, limit, allowed, nullptr);
}

std::vector<ToolSearchIndex::Hit> ToolSearchIndex::search(
    std::string_view query, std::size_t limit, const std::function<bool(std::size_t)>& allowed,
    const std::vector<float>& source_factor) const {
  if (source_factor.size() != impl_->sources)
    throw std::invalid_argument("ToolSearchIndex::search: one source factor per source");
  return search_scaled(query, limit, allowed, source_factor.data());
}

double ToolSearchIndex::ceiling(std::string_view query) const {
  const Impl& ix = *impl_;
  const double n = static_cast<double>(documents_.size());
  const double rare = std::log((n - 0.5) / 1.5 + 1.0);  // the idf of a term in one document
  std::vector<std::string> seen;
  double total = 0;
  ix.analyzer.analyze_query(query, [&](std::string_view, std::string_view t) {
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) return;
    seen.emplace_back(t);
    auto it = ix.vocabulary.find(t);
    total += (it != ix.vocabulary.end() ? ix.idf[it->second] : rare) * (ix.options.k1 + 1.0);
  });
  return total;
}

std::size_t ToolSearchIndex::source_count() const { return impl_->sources; }

std::size_t ToolSearchIndex::source_number(std::size_t document) const {
  return impl_->source_of.at(document);
}

std::vector<ToolSearchIndex::Hit> ToolSearchIndex::search_scaled(
    std::string_view query, std::size_t limit, const std::function<bool(std::size_t)>& allowed,
    const float* source_factor) const {
  std::vector<Hit> hits;
  if (limit == 0 || documents_.empty()) return hits;
  const Impl& ix = *impl_;
  thread_local QueryScratch scratch;

  // Query terms, each with its weight (1, or expansion_weight for a
  // synonym), and the sources the query names.
  auto& terms = scratch.terms;
  terms.clear();
  auto& named = scratch.named_sources;
  named.clear();
  const auto expansion = static_cast<float>(ix.options.expansion_weight);
  const bool boost_sources = ix.options.source_boost > 0;
  ix.analyzer.analyze_query(query, [&](std::string_view, std::string_view t) {
    const auto word = ix.vocabulary.find(t);
    if (word != ix.vocabulary.end()) terms.push_back({word->second, 1.0F});
    if (boost_sources) {
      if (auto it = ix.source_terms.find(t); it != ix.source_terms.end())
        named.insert(named.end(), it->second.begin(), it->second.end());
    }
    if (!ix.expansions.empty()) {
      if (auto it = ix.expansions.find(t); it != ix.expansions.end()) {
        const float* word_idf = word != ix.vocabulary.end() ? &ix.idf[word->second] : nullptr;
        for (std::uint32_t id : it->second.terms)
          terms.push_back(
              {id, synonym_weight(ix.options.cap_synonym_idf, expansion, word_idf, ix.idf[id])});
        if (boost_sources)
          named.insert(named.end(), it->second.sources.begin(), it->second.sources.end());
      }
    }
  });
  if (terms.empty()) return hits;
  std::sort(terms.begin(), terms.end(), [](const QueryTerm& x, const QueryTerm& y) {
    return x.term != y.term ? x.term < y.term : x.weight > y.weight;
  });
  terms.erase(std::unique(terms.begin(), terms.end(),
                          [](const QueryTerm& x, const QueryTerm& y) { return x.term == y.term; }),
              terms.end());

  // Accumulate.
  auto& scores = scratch.scores;
  auto& touched = scratch.touched;
  if (scores.size() < documents_.size()) scores.resize(documents_.size(), 0.0F);
  // Room for every document, so that a posting appends without a branch: it
  // writes its document at the end and moves the end only when the document
  // is new (a branch there is mispredicted half the time).
  if (touched.size() < documents_.size() + 1) touched.resize(documents_.size() + 1);
  std::size_t touched_count = 0;
  for (const QueryTerm& q : terms) {
    const float factor = q.weight * ix.idf[q.term];
    if (!(factor > 0.0F)) continue;  // expansion_weight 0: adds nothing, and would touch twice
    const std::uint32_t end = ix.posting_start[q.term + 1];
    for (std::uint32_t p = ix.posting_start[q.term]; p < end; ++p) {
      const std::uint32_t d = ix.posting_document[p];
      touched[touched_count] = d;
      touched_count += scores[d] == 0.0F ? 1 : 0;
      scores[d] += factor * ix.posting_weight[p];
    }
  }

  // The best `limit`: a heap whose top is the worst kept.
  const auto boost = static_cast<float>(1.0 + ix.options.source_boost);
  auto boosted = [&](std::uint32_t d) {
    return std::find(named.begin(), named.end(), ix.source_of[d]) != named.end();
  };
  auto& heap = scratch.heap;
  heap.clear();
  for (std::size_t i = 0; i < touched_count; ++i) {
    const std::uint32_t d = touched[i];
    float score = !named.empty() && boosted(d) ? scores[d] * boost : scores[d];
    if (source_factor != nullptr) score *= source_factor[ix.source_of[d]];
    const Candidate c{score, ix.name_rank[d], d};
    scores[d] = 0.0F;
    if (heap.size() == limit && !better(c, heap.front())) continue;
    if (allowed && !allowed(d)) continue;
    if (heap.size() == limit) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = c;
    } else {
      heap.push_back(c);
    }
    std::push_heap(heap.begin(), heap.end(), better);
  }
  std::sort_heap(heap.begin(), heap.end(), better);
  hits.reserve(heap.size());
  for (const Candidate& c : heap) hits.push_back({c.document, static_cast<double>(c.score)});
  return hits;
}

ToolSearchIndex::Explanation ToolSearchIndex::explain(std::string_view query,
                                                      std::size_t document) const {
  const Impl& ix = *impl_;
  Explanation out;
  if (document >= documents_.size()) return out;
  const std::uint32_t source = ix.source_of[document];
  // The query's terms as search() weighs them: the larger weight wins when a
  // word and a synonym reach the same term.
  struct Wanted {
    std::uint32_t term;
    float weight;
    std::string word;
    bool synonym;
  };
  std::vector<Wanted> wanted;
  bool named = false;
  auto names_source = [&](const std::vector<std::uint32_t>& sources) {
    return std::find(sources.begin(), sources.end(), source) != sources.end();
  };
  const auto expansion = static_cast<float>(ix.options.expansion_weight);
  ix.analyzer.analyze_query(query, [&](std::string_view word, std::string_view t) {
    const auto known = ix.vocabulary.find(t);
    if (known != ix.vocabulary.end())
      wanted.push_back({known->second, 1.0F, std::string(word), false});
    if (auto it = ix.source_terms.find(t); it != ix.source_terms.end())
      named = named || names_source(it->second);
    if (auto it = ix.expansions.find(t); it != ix.expansions.end()) {
      const float* word_idf = known != ix.vocabulary.end() ? &ix.idf[known->second] : nullptr;
      for (std::uint32_t id : it->second.terms)
        wanted.push_back(
            {id, synonym_weight(ix.options.cap_synonym_idf, expansion, word_idf, ix.idf[id]),
             std::string(word), true});
      named = named || names_source(it->second.sources);
    }
  });
  std::stable_sort(wanted.begin(), wanted.end(), [](const Wanted& x, const Wanted& y) {
    return x.term != y.term ? x.term < y.term : x.weight > y.weight;
  });
  wanted.erase(std::unique(wanted.begin(), wanted.end(),
                           [](const Wanted& x, const Wanted& y) { return x.term == y.term; }),
               wanted.end());

  // Where each term occurs in the document, analysed as build() did.
  const SearchDocument& doc = documents_[document];
  std::map<std::uint32_t, std::array<int, kFieldCount>> occurrences;
  auto count = [&](std::string_view text, bool is_name, Field field) {
    ix.analyzer.analyze(text, is_name, [&](std::string_view t) {
      if (auto it = ix.vocabulary.find(t); it != ix.vocabulary.end())
        ++occurrences[it->second][field];
    });
  };
  count(doc.name, true, kName);
  count(doc.title, false, kTitle);
  count(doc.description, false, kDescription);
  for (const auto& [name, description] : doc.parameters) {
    count(name, true, kParameterName);
    count(description, false, kParameterDescription);
  }
  for (const auto& value : doc.enum_values) count(value, true, kEnum);
  for (const auto& tag : doc.tags) count(tag, true, kTags);
  if (doc.source_text) count(*doc.source_text, false, kSourceText);

  const auto& damp = ix.damped[source];
  for (const Wanted& w : wanted) {
    const std::uint32_t begin = ix.posting_start[w.term];
    const std::uint32_t end = ix.posting_start[w.term + 1];
    const auto* first = ix.posting_document.data() + begin;
    const auto* last = ix.posting_document.data() + end;
    const auto* at = std::lower_bound(first, last, static_cast<std::uint32_t>(document));
    if (at == last || *at != document) continue;
    TermScore line;
    line.query_word = w.word;
    for (const auto& [word, id] : ix.vocabulary) {
      if (id == w.term) {
        line.term = word;
        break;
      }
    }
    line.synonym = w.synonym;
    if (auto it = occurrences.find(w.term); it != occurrences.end()) {
      for (std::size_t f = 0; f < kFieldCount; ++f)
        if (it->second[f] > 0 && ix.field_weight[f] > 0)
          line.fields.emplace_back(kFieldNames[f], it->second[f]);
    }
    line.idf = ix.idf[w.term];
    auto damped = std::lower_bound(damp.begin(), damp.end(), std::make_pair(w.term, 0.0F),
                                   [](const auto& x, const auto& y) { return x.first < y.first; });
    if (damped != damp.end() && damped->first == w.term) line.damping = damped->second;
    line.score =
        static_cast<double>(w.weight * ix.idf[w.term] *
                            ix.posting_weight[static_cast<std::size_t>(at - first) + begin]);
    out.score += line.score;
    out.terms.push_back(std::move(line));
  }
  if (named && ix.options.source_boost > 0 && !out.terms.empty()) {
    out.source_boost = 1.0 + ix.options.source_boost;
    out.score *= out.source_boost;
  }
  std::sort(out.terms.begin(), out.terms.end(),
            [](const TermScore& x, const TermScore& y) { return x.score > y.score; });
  return out;
}

std::vector<std::string> ToolSearchIndex::analyze(std::string_view text, bool is_name) const {
  std::vector<std::string> words;
  impl_->analyzer.analyze(text, is_name, [&](std::string_view t) { words.emplace_back(t); });
  return words;
}

std::size_t ToolSearchIndex::memory_bytes() const {
  const Impl& ix = *impl_;
  std::size_t bytes = sizeof(*this) + sizeof(Impl);
  bytes += ix.idf.capacity() * sizeof(float);
  bytes += ix.posting_start.capacity() * sizeof(std::uint32_t);
  bytes += ix.posting_document.capacity() * sizeof(std::uint32_t);
  bytes += ix.posting_weight.capacity() * sizeof(float);
  bytes += ix.name_rank.capacity() * sizeof(std::uint32_t);
  bytes += ix.source_of.capacity() * sizeof(std::uint32_t);
  bytes += ix.field_length.capacity() * sizeof(std::uint32_t);
  using DampedTerms = std::vector<std::pair<std::uint32_t, float>>;
  bytes += ix.damped.capacity() * sizeof(DampedTerms);
  for (const auto& terms : ix.damped) bytes += terms.capacity() * sizeof(terms[0]);
  // Hash maps: a bucket pointer each, a node (next pointer, value, hash) each.
  constexpr std::size_t kNodeOverhead = 2 * sizeof(void*);
  bytes += ix.vocabulary.bucket_count() * sizeof(void*);
  for (const auto& [word, id] : ix.vocabulary)
    bytes += kNodeOverhead + string_bytes(word) + sizeof(id);
  bytes += ix.expansions.bucket_count() * sizeof(void*);
  for (const auto& [word, expansion] : ix.expansions)
    bytes += kNodeOverhead + string_bytes(word) + sizeof(expansion) +
             (expansion.terms.capacity() + expansion.sources.capacity()) * sizeof(std::uint32_t);
  bytes += ix.source_terms.bucket_count() * sizeof(void*);
  for (const auto& [word, sources] : ix.source_terms)
    bytes += kNodeOverhead + string_bytes(word) + sizeof(std::vector<std::uint32_t>) +
             sources.capacity() * sizeof(std::uint32_t);
  bytes += documents_.capacity() * sizeof(SearchDocument);
  for (const SearchDocument& doc : documents_) {
    bytes += string_bytes(doc.name) - sizeof(std::string) + string_bytes(doc.title) -
             sizeof(std::string) + string_bytes(doc.description) - sizeof(std::string) +
             string_bytes(doc.source) - sizeof(std::string);
    bytes += doc.parameters.capacity() * sizeof(doc.parameters[0]);
    for (const auto& [name, description] : doc.parameters)
      bytes += string_bytes(name) - sizeof(std::string) + string_bytes(description) -
               sizeof(std::string);
    bytes += doc.enum_values.capacity() * sizeof(std::string);
    for (const auto& value : doc.enum_values) bytes += string_bytes(value) - sizeof(std::string);
    bytes += doc.tags.capacity() * sizeof(std::string);
    for (const auto& tag : doc.tags) bytes += string_bytes(tag) - sizeof(std::string);
  }
  return bytes;
}

// ---------------------------------------------------------------------------

namespace {

std::string string_field(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

void collect_enum(const json& schema, std::vector<std::string>& out) {
  if (!schema.is_object()) return;
  auto it = schema.find("enum");
  if (it == schema.end() || !it->is_array()) return;
  for (const auto& value : *it)
    if (value.is_string()) out.push_back(value.get<std::string>());
}

// The enum of a property, of its array items, and of the properties of an
// object property or of object items (one level).
void collect_enums(const json& property, std::vector<std::string>& out) {
  if (!property.is_object()) return;
  collect_enum(property, out);
  auto nested = [&](const json& schema) {
    if (!schema.is_object()) return;
    auto props = schema.find("properties");
    if (props == schema.end() || !props->is_object()) return;
    for (const auto& [key, value] : props->items()) collect_enum(value, out);
  };
  nested(property);
  if (auto items = property.find("items"); items != property.end() && items->is_object()) {
    collect_enum(*items, out);
    nested(*items);
  }
}

}  // namespace

SearchDocument search_document_from_tool(const json& tool, std::string source) {
  SearchDocument doc;
  doc.source = std::move(source);
  doc.name = string_field(tool, "name");
  doc.title = string_field(tool, "title");
  if (doc.title.empty() && tool.is_object()) {
    if (auto annotations = tool.find("annotations"); annotations != tool.end())
      doc.title = string_field(*annotations, "title");
  }
  doc.description = string_field(tool, "description");
  if (!tool.is_object()) return doc;
  auto schema = tool.find("inputSchema");
  if (schema == tool.end() || !schema->is_object()) return doc;
  auto properties = schema->find("properties");
  if (properties == schema->end() || !properties->is_object()) return doc;
  for (const auto& [key, property] : properties->items()) {
    doc.parameters.emplace_back(key, string_field(property, "description"));
    collect_enums(property, doc.enum_values);
  }
  return doc;
}

}  // namespace toolmux
