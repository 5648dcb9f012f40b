// Text analysis for the tool search index: how tool names, running text and
// queries become index terms, and how synonym lists are keyed.
//
// Names are cut at white space into words, and each word into parts at every
// other separator, at case changes and at letter/digit boundaries; the parts
// joined are a term too. Running text is cut into runs of letters and digits.
// Everything is lower-cased (ASCII letters; other letters are kept as they
// are); stop words are dropped from running text, never from names; words are
// stemmed with Snowball English (libstemmer) when asked. Invalid UTF-8 bytes
// separate words, they never fail.
//
// Everything here is safe to call from any number of threads at once (each
// thread stems with a stemmer of its own) and throws only std::bad_alloc, or
// std::runtime_error when libstemmer has no English stemmer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toolmux {

// Lower-case query word -> the words it also matches.
using SynonymMap = std::map<std::string, std::vector<std::string>, std::less<>>;

namespace text {

// The tokenizers are templates over their callback, here in the header, so
// that the index's build (every word of every tool) inlines them.

enum class CharClass : std::uint8_t { kSeparator, kUpper, kLower, kDigit, kUnderscore };

struct Char {
  CharClass cls;
  std::size_t length;  // bytes
};

// The class and length of the non-ASCII character that starts at text[i]: a
// letter counts as lower case; an invalid UTF-8 byte is a separator.
Char non_ascii_char_at(std::string_view text, std::size_t i);

inline constexpr std::array<CharClass, 128> kAsciiClass = [] {
  std::array<CharClass, 128> classes{};
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (c >= 'a' && c <= 'z') {
      classes[c] = CharClass::kLower;
    } else if (c >= 'A' && c <= 'Z') {
      classes[c] = CharClass::kUpper;
    } else if (c >= '0' && c <= '9') {
      classes[c] = CharClass::kDigit;
    } else if (c == '_') {
      classes[c] = CharClass::kUnderscore;
    } else {
      classes[c] = CharClass::kSeparator;
    }
  }
  return classes;
}();

inline Char char_at(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return {kAsciiClass[c], 1};
  return non_ascii_char_at(text, i);
}

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

inline void append_lower(std::string& out, std::string_view text) {
  const std::size_t at = out.size();
  out.resize(at + text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    out[at + i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
}

// Words of running text: maximal runs of letters and digits (and '_' when
// keep_underscore), lower-cased. Calls emit(word).
template <class Emit>
void tokenize_text(std::string_view text, bool keep_underscore, std::string& buffer, Emit&& emit) {
  std::size_t i = 0;
  while (i < text.size()) {
    Char ch = char_at(text, i);
    const bool word_char =
        ch.cls != CharClass::kSeparator && (keep_underscore || ch.cls != CharClass::kUnderscore);
    if (!word_char) {
      i += ch.length;
      continue;
    }
    const std::size_t start = i;
    while (i < text.size()) {
      ch = char_at(text, i);
      if (ch.cls == CharClass::kSeparator || (!keep_underscore && ch.cls == CharClass::kUnderscore))
        break;
      i += ch.length;
    }
    buffer.clear();
    append_lower(buffer, text.substr(start, i - start));
    emit(std::string_view(buffer), true);
  }
}

// Words of a name: the text is cut at white space into words, and each word
// into parts at every other separator ('_', '-', '.', '/', ...), at case
// changes (getHTTPResponse: get, HTTP, Response) and at letter/digit
// boundaries. Calls emit(part, single) for each part, lower-cased, and, when a
// word has several parts, emit(joined, false) with the parts joined
// (list_issues: list, issues, listissues). `single` is true when the word is
// one part only.
template <class Emit>
void tokenize_name(std::string_view text, std::string& buffer,
                   std::vector<std::pair<std::size_t, std::size_t>>& parts, Emit&& emit) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_space(text[i])) {
      ++i;
      continue;
    }
    std::size_t word_end = i;
    while (word_end < text.size() && !is_space(text[word_end])) ++word_end;
    const std::string_view word = text.substr(0, word_end);

    parts.clear();
    std::size_t part_start = 0;
    bool in_part = false;
    CharClass previous = CharClass::kSeparator;
    while (i < word_end) {
      const Char ch = char_at(word, i);
      const bool letter_or_digit =
          ch.cls != CharClass::kSeparator && ch.cls != CharClass::kUnderscore;
      if (!letter_or_digit) {
        if (in_part) parts.emplace_back(part_start, i);
        in_part = false;
        previous = CharClass::kSeparator;
        i += ch.length;
        continue;
      }
      bool boundary = false;
      if (in_part) {
        const bool digit = ch.cls == CharClass::kDigit;
        const bool previous_digit = previous == CharClass::kDigit;
        // letters|digits, lower|Upper, and the R of HTTPResponse
        boundary = digit != previous_digit ||
                   (previous == CharClass::kLower && ch.cls == CharClass::kUpper) ||
                   (previous == CharClass::kUpper && ch.cls == CharClass::kUpper &&
                    i + 1 < word_end && char_at(word, i + 1).cls == CharClass::kLower);
      }
      if (boundary) parts.emplace_back(part_start, i);
      if (!in_part || boundary) part_start = i;
      in_part = true;
      previous = ch.cls;
      i += ch.length;
    }
    if (in_part) parts.emplace_back(part_start, word_end);
    i = word_end;

    const bool single = parts.size() == 1;
    for (const auto& [begin, end] : parts) {
      buffer.clear();
      append_lower(buffer, word.substr(begin, end - begin));
      emit(std::string_view(buffer), single);
    }
    if (parts.size() > 1) {
      buffer.clear();
      for (const auto& [begin, end] : parts) append_lower(buffer, word.substr(begin, end - begin));
      emit(std::string_view(buffer), false);
    }
  }
}

// Dropped from running text and from one-word query words, never from names.
bool is_stop_word(std::string_view word);

// The Snowball English stem of a lower-case word into `out`; a word longer
// than 64 bytes (an id, a blob) is kept as it is.
void stem_english(std::string_view word, std::string& out);

// Analysis as a search index's options set it: `stem` (Snowball English) and
// `split_names` (without it, '_' is a word character and a name is one word).
struct TextAnalyzer {
  bool stem = true;
  bool split_names = true;

  // The term a lower-case word is indexed as (stemmed when `stem`).
  void term_of(std::string_view word, std::string& out) const {
    if (stem) {
      stem_english(word, out);
    } else {
      out.assign(word);
    }
  }

  // Analysis of indexed text; calls emit(term).
  template <class Emit>
  void analyze(std::string_view text, bool is_name, Emit&& emit) const {
    std::string buffer;
    std::string term;
    if (is_name && split_names) {
      std::vector<std::pair<std::size_t, std::size_t>> parts;
      tokenize_name(text, buffer, parts, [&](std::string_view word, bool) {
        term_of(word, term);
        emit(std::string_view(term));
      });
      return;
    }
    // Without name splitting ('_' is a word character): a name is one word.
    tokenize_text(text, !split_names, buffer, [&](std::string_view word, bool) {
      if (!is_name && is_stop_word(word)) return;
      term_of(word, term);
      emit(std::string_view(term));
    });
  }

  // Analysis of a query; calls emit(lower-case word, term).
  // Query words are split like names, but a one-part word that is a stop word
  // is dropped.
  template <class Emit>
  void analyze_query(std::string_view text, Emit&& emit) const {
    std::string buffer;
    std::string term;
    auto word_done = [&](std::string_view word, bool single) {
      if (single && is_stop_word(word)) return;
      term_of(word, term);
      emit(word, std::string_view(term));
    };
    if (split_names) {
      std::vector<std::pair<std::size_t, std::size_t>> parts;
      tokenize_name(text, buffer, parts, word_done);
    } else {
      tokenize_text(text, true, buffer, word_done);
    }
  }
};

// The synonym lists a search uses, keyed by the term of their word (so that
// "removing" finds the entry "remove" when stemming): the built-in
// default_synonyms() when `use_default`, then `own`, whose entry replaces the
// built-in entry of the same term (an empty one turns it off); the entries of
// `own` that share a term are joined. The views point into `own` and into
// default_synonyms(), which must outlive the result.
std::map<std::string, std::vector<std::string_view>, std::less<>> synonyms_by_term(
    const TextAnalyzer& analyzer, const SynonymMap& own, bool use_default);

}  // namespace text
}  // namespace toolmux
