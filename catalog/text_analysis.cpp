#include "catalog/text_analysis.h"

#include <libstemmer.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "catalog/default_synonyms.h"
#include "src/base/utf8.h"

namespace toolmux::text {
namespace {

// Non-ASCII code points that separate words rather than belong to them:
// Latin-1 punctuation and symbols, general punctuation (dashes, quotes,
// bullets), arrows and symbols, CJK punctuation, and emoji.
bool is_unicode_separator(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x2BFF) ||
         (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
         (cp >= 0xFF00 && cp <= 0xFF0F) || cp >= 0x1F000;
}

// One Snowball English stemmer per thread: sb_stemmer is not thread-safe.
class Stemmer {
 public:
  Stemmer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {
    if (stemmer_ == nullptr) throw std::runtime_error("libstemmer: no English stemmer");
  }
  ~Stemmer() { sb_stemmer_delete(stemmer_); }
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;

  void stem(std::string_view word, std::string& out) {
    constexpr std::size_t kMaxStemmed = 64;  // longer words (ids, blobs) are kept as they are
    if (word.size() > kMaxStemmed) {
      out.assign(word);
      return;
    }
    const sb_symbol* stemmed = sb_stemmer_stem(
        stemmer_, reinterpret_cast<const sb_symbol*>(word.data()), static_cast<int>(word.size()));
    if (stemmed == nullptr) {  // out of memory
      out.assign(word);
      return;
    }
    out.assign(reinterpret_cast<const char*>(stemmed),
               static_cast<std::size_t>(sb_stemmer_length(stemmer_)));
  }

  static Stemmer& for_this_thread() {
    thread_local Stemmer stemmer;
    return stemmer;
  }

 private:
  sb_stemmer* stemmer_;
};

}  // namespace

// The class and length of the non-ASCII character that starts at text[i]: a
// letter counts as lower case; an invalid UTF-8 byte is a separator.
Char non_ascii_char_at(std::string_view text, std::size_t i) {
  const Utf8Char c = decode_utf8(text, i);
  if (!c.valid) return {CharClass::kSeparator, 1};
  return {is_unicode_separator(c.code_point) ? CharClass::kSeparator : CharClass::kLower, c.length};
}

// Dropped from running text and from one-word query words, never from names.
bool is_stop_word(std::string_view word) {
  static constexpr auto kStopWords = std::to_array<std::string_view>(
      {"a",    "an",   "and",   "are",   "as",   "at",    "be",    "been",  "but",   "by", "can",
       "do",   "does", "for",   "from",  "has",  "have",  "how",   "i",     "if",    "in", "into",
       "is",   "it",   "its",   "me",    "my",   "of",    "on",    "or",    "our",   "so", "such",
       "than", "that", "the",   "their", "then", "there", "these", "this",  "those", "to", "was",
       "we",   "were", "which", "will",  "with", "you",   "your",  "please"});
  return std::find(kStopWords.begin(), kStopWords.end(), word) != kStopWords.end();
}

void stem_english(std::string_view word, std::string& out) {
  Stemmer::for_this_thread().stem(word, out);
}

std::map<std::string, std::vector<std::string_view>, std::less<>> synonyms_by_term(
    const TextAnalyzer& analyzer, const SynonymMap& own, bool use_default) {
  std::map<std::string, std::vector<std::string_view>, std::less<>> words_of_key;
  auto key_term = [&](std::string_view key) {
    std::string lower;
    append_lower(lower, key);
    std::string term_of_key;
    analyzer.term_of(lower, term_of_key);
    return term_of_key;
  };
  if (use_default) {
    for (const auto& [key, values] : default_synonyms()) {
      auto& words = words_of_key[key_term(key)];
      words.insert(words.end(), values.begin(), values.end());
    }
  }
  std::set<std::string, std::less<>> replaced;
  for (const auto& [key, values] : own) {
    std::string t = key_term(key);
    auto& words = words_of_key[t];
    if (replaced.insert(std::move(t)).second) words.clear();
    words.insert(words.end(), values.begin(), values.end());
  }
  return words_of_key;
}

}  // namespace toolmux::text
