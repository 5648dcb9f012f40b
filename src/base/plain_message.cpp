// jsonrpc::read_plain_message: the fast way through a message that breaks no
// rule, with simdjson's On-Demand API (bench/json_envelope measures it beside
// nlohmann's SAX parser and the full reader). simdjson checks the syntax, the
// UTF-8, escapes (a lone surrogate is an error) and unescaped control
// characters over the whole text; what it does not check, this does: a
// repeated key, the depth and value limits, numbers (read from their text by
// read_json_number, the full reader's own conversion, which also refuses what
// simdjson lets through, such as a leading zero) and text after the message.
// Anything else it declines, and parse_message reads the text the slow way,
// which names what is wrong.
#include <simdjson.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

#include "src/base/jsonrpc.h"

namespace toolmux::jsonrpc {
namespace {

namespace od = simdjson::ondemand;

// Texts up to this size are read with the reading thread's own parser, which
// keeps its buffers (about six times the largest text it has read) between
// messages; larger ones, up to kLargeText, with one parser shared by all
// threads, taken only when free; larger still, or while it is taken, the full
// reader's way. So a thread holds at most ~100 KB, and the process ~6 MB more.
constexpr std::size_t kSmallText = std::size_t{16} * 1024;
constexpr std::size_t kLargeText = std::size_t{1024} * 1024;

struct Reader {
  explicit Reader(std::size_t max_text) : parser(max_text) {}
  od::parser parser;
  std::string padded;  // the text, copied with the padding simdjson reads past its end
};

class Converter {
 public:
  explicit Converter(const JsonLimits& limits) : limits_(limits) {}

  // `value` as a tree in `out`; `depth` is the number of containers around
  // it. false for anything the full reader would report, or read otherwise.
  bool to_tree(od::value value, json& out, std::size_t depth) {
    if (++values_ > limits_.max_values) return false;
    od::json_type type;
    if (value.type().get(type)) return false;
    switch (type) {
      case od::json_type::object: {
        if (depth + 1 > limits_.max_depth) return false;
        od::object object;
        if (value.get_object().get(object)) return false;
        out = json::object();
        for (auto field : object) {
          std::string_view key;
          if (field.unescaped_key().get(key)) return false;
          od::value member;
          if (field.value().get(member)) return false;
          auto [slot, inserted] = out.get_ref<json::object_t&>().try_emplace(std::string(key));
          if (!inserted) return false;  // a repeated key
          if (!to_tree(member, slot->second, depth + 1)) return false;
        }
        return true;
      }
      case od::json_type::array: {
        if (depth + 1 > limits_.max_depth) return false;
        od::array array;
        if (value.get_array().get(array)) return false;
        out = json::array();
        for (auto element : array) {
          od::value item;
          if (element.get(item)) return false;
          out.push_back(nullptr);
          if (!to_tree(item, out.back(), depth + 1)) return false;
        }
        return true;
      }
      case od::json_type::string: {
        std::string_view text;
        if (value.get_string().get(text)) return false;
        out = std::string(text);
        return true;
      }
      case od::json_type::number: {
        std::string_view token = value.raw_json_token();
        while (!token.empty() && (token.back() == ' ' || token.back() == '\t' ||
                                  token.back() == '\n' || token.back() == '\r')) {
          token.remove_suffix(1);
        }
        return read_json_number(token, out);
      }
      case od::json_type::boolean: {
        bool flag = false;
        if (value.get_bool().get(flag)) return false;
        out = flag;
        return true;
      }
      case od::json_type::null: {
        bool null = false;
        if (value.is_null().get(null) || !null) return false;
        out = nullptr;
        return true;
      }
    }
    return false;
  }

  // The envelope's members, each read once, in one pass over the text.
  std::optional<Message> message(od::document& doc) {
    od::object object;
    if (doc.get_object().get(object)) return std::nullopt;
    ++values_;  // the message itself, as the full reader counts it
    std::string_view keys[8];
    std::size_t key_count = 0;
    std::optional<json> id;
    std::optional<json> jsonrpc;
    std::optional<json> method;
    std::optional<json> params;
    std::optional<json> result;
    std::optional<json> error;
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return std::nullopt;
      if (std::find(keys, keys + key_count, key) != keys + key_count) return std::nullopt;
      if (key_count == std::size(keys)) return std::nullopt;  // not a plain envelope
      keys[key_count++] = key;
      od::value value;
      if (field.value().get(value)) return std::nullopt;
      std::optional<json>* slot = key == "id"        ? &id
                                  : key == "jsonrpc" ? &jsonrpc
                                  : key == "method"  ? &method
                                  : key == "params"  ? &params
                                  : key == "result"  ? &result
                                  : key == "error"   ? &error
                                                     : nullptr;
      json ignored;  // another member is read (to check it) and dropped
      json& out = slot ? slot->emplace() : ignored;
      if (!to_tree(value, out, 1)) return std::nullopt;
    }
    // Nothing after the message: current_location() fails once the text is used up.
    if (!doc.current_location().error()) return std::nullopt;

    // Only what the full reader accepts as it is; it answers the rest.
    if (!jsonrpc || *jsonrpc != "2.0") return std::nullopt;
    if (id && !id->is_string() && !id->is_number_integer()) return std::nullopt;
    Message m;
    if (id) m.id = std::move(*id);
    if (!method) {
      if (!id || (!result && !error)) return std::nullopt;
      m.kind = Message::Kind::response;
      m.response = json::object();
      if (result) {
        m.response["result"] = std::move(*result);
      } else {
        m.response["error"] = std::move(*error);
      }
      return m;
    }
    if (!method->is_string()) return std::nullopt;
    m.method = std::move(method->get_ref<std::string&>());
    if (params) {
      if (!params->is_object()) return std::nullopt;
      m.params = std::move(*params);
    }
    m.kind = id ? Message::Kind::request : Message::Kind::notification;
    return m;
  }

 private:
  const JsonLimits& limits_;
  std::size_t values_ = 0;
};

std::optional<Message> read_with(Reader& reader, std::string_view text, const JsonLimits& limits) {
  reader.padded.assign(text);
  reader.padded.resize(text.size() + simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  if (reader.parser.iterate(reader.padded.data(), text.size(), reader.padded.size()).get(doc)) {
    return std::nullopt;
  }
  Converter converter(limits);
  return converter.message(doc);
}

}  // namespace

std::optional<Message> read_plain_message(std::string_view text, const JsonLimits& limits) {
  if (text.size() <= kSmallText) {
    thread_local Reader reader(kSmallText);
    return read_with(reader, text, limits);
  }
  if (text.size() > kLargeText) return std::nullopt;
  static Reader shared(kLargeText);
  static std::mutex taken;
  std::unique_lock lock(taken, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  return read_with(shared, text, limits);
}

}  // namespace toolmux::jsonrpc
