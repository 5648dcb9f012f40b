#include "transports/www_authenticate.h"

#include <cctype>

#include "src/base/ascii.h"
namespace toolmux {
namespace {

// RFC 9110 §11.2 token68 characters (the trailing '=' padding aside).
bool token68_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/';
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void skip_spaces() {
    while (!done() && (peek() == ' ' || peek() == '\t')) ++pos_;
  }
  void skip_spaces_and_commas() {
    while (!done() && (peek() == ' ' || peek() == '\t' || peek() == ',')) ++pos_;
  }
  std::string_view token() {
    const std::size_t start = pos_;
    while (!done() && is_http_token_char(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // Whether a `name BWS "="` (not a token68's padding) starts here.
  bool param_ahead() const {
    std::size_t p = pos_;
    while (p < text_.size() && is_http_token_char(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    if (p >= text_.size() || text_[p] != '=') return false;
    ++p;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    // "abc==" is a token68: after its '=' comes another '=', a ',' or the end.
    return p < text_.size() && text_[p] != '=' && text_[p] != ',';
  }
  // A quoted-string (RFC 9110 §5.6.4), unescaped; nullopt when unterminated.
  std::optional<std::string> quoted() {
    ++pos_;  // the opening quote
    std::string out;
    while (!done()) {
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\') {
        if (done()) return std::nullopt;
        out += text_[pos_++];
      } else {
        out += c;
      }
    }
    return std::nullopt;
  }
  std::string_view token68() {
    const std::size_t start = pos_;
    while (!done() && token68_char(peek())) ++pos_;
    while (!done() && peek() == '=') ++pos_;
    return text_.substr(start, pos_ - start);
  }
  void advance() { ++pos_; }
  std::size_t pos() const { return pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<std::string> AuthChallenge::param(std::string_view name) const {
  const auto it = params.find(std::string(name));
  if (it == params.end()) return std::nullopt;
  return it->second;
}

Result<std::vector<AuthChallenge>> parse_www_authenticate(std::string_view header) {
  if (header.size() > kMaxWwwAuthenticateBytes) {
    return Status::invalid_argument("the WWW-Authenticate header is " +
                                    std::to_string(header.size()) + " bytes, over the limit of " +
                                    std::to_string(kMaxWwwAuthenticateBytes));
  }
  std::vector<AuthChallenge> challenges;
  Reader in(header);
  in.skip_spaces_and_commas();
  while (!in.done()) {
    const std::string_view scheme = in.token();
    if (scheme.empty()) {
      return Status::invalid_argument("the WWW-Authenticate header has '" +
                                      std::string(1, in.peek()) + "' at offset " +
                                      std::to_string(in.pos()) + " where a scheme should start");
    }
    if (challenges.size() == kMaxChallenges) {
      return Status::invalid_argument("the WWW-Authenticate header has more than " +
                                      std::to_string(kMaxChallenges) + " challenges");
    }
    AuthChallenge challenge;
    challenge.scheme = std::string(scheme);
    in.skip_spaces();
    if (!in.done() && in.peek() != ',' && !in.param_ahead()) {
      challenge.token68 = std::string(in.token68());
      if (challenge.token68.empty()) {
        return Status::invalid_argument("the WWW-Authenticate header's " + challenge.scheme +
                                        " challenge has '" + std::string(1, in.peek()) +
                                        "' at offset " + std::to_string(in.pos()));
      }
      in.skip_spaces();
    } else {
      std::size_t count = 0;
      while (in.param_ahead()) {
        const std::string name = ascii_lower(in.token());
        in.skip_spaces();
        in.advance();  // '='
        in.skip_spaces();
        std::string value;
        if (in.peek() == '"') {
          auto q = in.quoted();
          if (!q) {
            return Status::invalid_argument("the WWW-Authenticate header's parameter " + name +
                                            " has a quoted value that never ends");
          }
          value = std::move(*q);
        } else {
          value = std::string(in.token());
        }
        if (++count > kMaxChallengeParams) {
          return Status::invalid_argument("the WWW-Authenticate header's " + challenge.scheme +
                                          " challenge has more than " +
                                          std::to_string(kMaxChallengeParams) + " parameters");
        }
        challenge.params.emplace(name, std::move(value));  // the first one stays
        in.skip_spaces();
        if (in.done()) break;
        if (in.peek() != ',') {
          return Status::invalid_argument(
              "the WWW-Authenticate header has '" + std::string(1, in.peek()) + "' at offset " +
              std::to_string(in.pos()) + " where ',' or the end should come");
        }
        in.skip_spaces_and_commas();
      }
    }
    challenges.push_back(std::move(challenge));
    in.skip_spaces_and_commas();
  }
  return challenges;
}

std::optional<AuthChallenge> bearer_challenge(std::string_view header) {
  auto challenges = parse_www_authenticate(header);
  if (!challenges.ok()) return std::nullopt;
  for (auto& c : challenges.value()) {
    if (ascii_lower(c.scheme) == "bearer") return std::move(c);
  }
  return std::nullopt;
}

}  // namespace toolmux
