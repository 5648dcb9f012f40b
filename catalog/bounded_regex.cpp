#include "catalog/bounded_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace toolmux {

namespace {

// Longer patterns are refused: a schema or a search query has no use for them.
constexpr std::size_t kMaxPatternBytes = std::size_t{64} * 1024;

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
struct MatchContextDeleter {
  void operator()(pcre2_match_context* context) const { pcre2_match_context_free(context); }
};
struct CompileContextDeleter {
  void operator()(pcre2_compile_context* context) const { pcre2_compile_context_free(context); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int length = pcre2_get_error_message(code, buffer, sizeof buffer);
  if (length < 0) return "error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
}

}  // namespace

struct BoundedRegex::Impl {
  std::unique_ptr<pcre2_code, CodeDeleter> code;
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> limits;
};

BoundedRegex::BoundedRegex(std::string pattern, std::unique_ptr<Impl> impl)
    : pattern_(std::move(pattern)), impl_(std::move(impl)) {}

BoundedRegex::~BoundedRegex() = default;

Result<std::shared_ptr<const BoundedRegex>> BoundedRegex::compile(std::string_view pattern,
                                                                  Flavour flavour,
                                                                  bool case_sensitive,
                                                                  RegexLimits limits) {
  if (pattern.size() > kMaxPatternBytes) {
    return Status::invalid_argument("the pattern is longer than " +
                                    std::to_string(kMaxPatternBytes) + " bytes");
  }
  // \C could split a UTF-8 character; nothing here needs it.
  std::uint32_t options = PCRE2_UTF | PCRE2_NEVER_BACKSLASH_C;
  std::uint32_t extra = 0;
  if (flavour == Flavour::ecmascript) {
    // JavaScript's meaning where PCRE2 can be asked for it.
    options |=
        PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS | PCRE2_MATCH_UNSET_BACKREF;
    extra |= PCRE2_EXTRA_ALT_BSUX;
  }
  if (!case_sensitive) options |= PCRE2_CASELESS;

  std::unique_ptr<pcre2_compile_context, CompileContextDeleter> context(
      pcre2_compile_context_create(nullptr));
  if (!context) {
    return Status::resource_exhausted("out of memory");
  }
  pcre2_set_compile_extra_options(context.get(), extra);
  pcre2_set_max_pattern_length(context.get(), kMaxPatternBytes);

  int code = 0;
  PCRE2_SIZE offset = 0;
  std::unique_ptr<pcre2_code, CodeDeleter> compiled(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &code,
                    &offset, context.get()));
  if (!compiled) {
    return Status::invalid_argument(pcre2_message(code) + " at offset " + std::to_string(offset));
  }

  std::unique_ptr<pcre2_match_context, MatchContextDeleter> match_context(
      pcre2_match_context_create(nullptr));
  if (!match_context) {
    return Status::resource_exhausted("out of memory");
  }
  pcre2_set_match_limit(match_context.get(), limits.match_limit);
  pcre2_set_depth_limit(match_context.get(), limits.depth_limit);
  pcre2_set_heap_limit(match_context.get(), limits.heap_limit_kib);

  auto impl = std::make_unique<Impl>();
  impl->code = std::move(compiled);
  impl->limits = std::move(match_context);
  return std::shared_ptr<const BoundedRegex>(
      new BoundedRegex(std::string(pattern), std::move(impl)));
}

BoundedRegex::Match BoundedRegex::search(std::string_view text) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(pcre2_match_data_create(1, nullptr));
  if (!data) return Match::too_costly;
  const int rc = pcre2_match(impl_->code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()),
                             text.size(), 0, 0, data.get(), impl_->limits.get());
  if (rc >= 0) return Match::found;
  if (rc == PCRE2_ERROR_NOMATCH) return Match::not_found;
  // A limit (match, depth, heap), invalid UTF-8, or no memory: not decided.
  return Match::too_costly;
}

std::optional<bool> BoundedRegex::matches(std::string_view pattern, std::string_view text) {
  const auto regex = compile(pattern);
  if (!regex.ok()) return std::nullopt;
  switch ((*regex)->search(text)) {
    case Match::found:
      return true;
    case Match::not_found:
      return false;
    case Match::too_costly:
      break;
  }
  return std::nullopt;
}

}  // namespace toolmux
