#include "catalog/catalog_file_sections.h"

#include <cctype>

#include "catalog/catalog_file_reader.h"

namespace toolmux::catalog_file {

namespace {

const std::vector<std::string_view> kSearchFields = {
    "$comment", "weights", "synonyms", "defaultSynonyms", "expansionWeight", "learn", "rerank"};
const std::vector<std::string_view> kWeightFields = {
    "name",  "title", "description", "parameterNames", "parameterDescriptions",
    "enums", "tags",  "source"};
const std::vector<std::string_view> kRerankFields = {"$comment", "enabled", "candidates",
                                                     "maxTokens", "timeoutMs"};

}  // namespace

// "search": tool_search's field weights and query expansion. The file's
// synonyms add to the built-in list (an entry for a word the list has
// replaces it); "defaultSynonyms": false leaves the built-in list out.
SearchOptions read_search(const json& value, Problems& problems) {
  SearchOptions options;
  ObjectReader reader(value, "/search", problems);
  reader.reject_unknown(kSearchFields);
  reader.string("$comment", false);
  auto non_negative = [&](ObjectReader& r, std::string_view field, double& out) {
    const json* v = r.field(field, false);
    if (!v) return;
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() > 100) {
      r.add(r.pointer(field), "expected a number from 0 to 100, got " + v->dump());
      return;
    }
    out = v->get<double>();
  };
  if (const json* weights = reader.object("weights", false)) {
    ObjectReader w(*weights, reader.pointer("weights"), problems);
    w.reject_unknown(kWeightFields);
    non_negative(w, "name", options.name_weight);
    non_negative(w, "title", options.title_weight);
    non_negative(w, "description", options.description_weight);
    non_negative(w, "parameterNames", options.parameter_name_weight);
    non_negative(w, "parameterDescriptions", options.parameter_description_weight);
    non_negative(w, "enums", options.enum_weight);
    non_negative(w, "tags", options.tag_weight);
    non_negative(w, "source", options.source_text_weight);
  }
  if (const json* synonyms = reader.object("synonyms", false)) {
    for (const auto& [word, expansions] : synonyms->items()) {
      const std::string at = reader.pointer("synonyms") + "/" + pointer_token(word);
      std::vector<std::string> words;
      if (!expansions.is_array()) {
        reader.add(at, "expected an array of words, got " + type_name(expansions));
        continue;
      }
      for (const auto& e : expansions) {
        if (e.is_string() && !e.get_ref<const std::string&>().empty()) {
          words.push_back(e.get<std::string>());
        } else {
          reader.add(at, "expected an array of non-empty strings");
          break;
        }
      }
      std::string key = word;
      for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      options.synonyms[key] = std::move(words);
    }
  }
  if (auto use_defaults = reader.boolean("defaultSynonyms"))
    options.use_default_synonyms = *use_defaults;
  non_negative(reader, "expansionWeight", options.expansion_weight);
  return options;
}

// "learn": false keeps tool_search from learning from use (read apart from
// read_search: it is not an option of the index). read_search has checked
// the section's other fields.
bool read_search_learn(const json& value, Problems& problems) {
  ObjectReader reader(value, "/search", problems);
  return reader.boolean("learn").value_or(true);
}

// "rerank": whether tool_search asks the client's model to order an unsure
// answer's candidates (catalog/search_rerank.h); off unless it says so.
SearchRerankSettings read_search_rerank(const json& value, Problems& problems) {
  SearchRerankSettings settings;
  ObjectReader search(value, "/search", problems);
  const json* rerank = search.object("rerank", false);
  if (!rerank) return settings;
  ObjectReader reader(*rerank, search.pointer("rerank"), problems);
  reader.reject_unknown(kRerankFields);
  reader.string("$comment", false);
  if (auto enabled = reader.boolean("enabled")) settings.enabled = *enabled;
  if (auto n = reader.integer("candidates", false, kRerankMinCandidates, kRerankMaxCandidates))
    settings.candidates = static_cast<std::size_t>(*n);
  if (auto n = reader.integer("maxTokens", false, 16, 4096))
    settings.max_tokens = static_cast<std::size_t>(*n);
  if (auto n = reader.integer("timeoutMs", false, 100, 25000))
    settings.timeout = std::chrono::milliseconds(*n);
  return settings;
}

}  // namespace toolmux::catalog_file
