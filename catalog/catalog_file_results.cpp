#include "catalog/catalog_file_sections.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include "catalog/catalog_file_reader.h"

namespace toolmux::catalog_file {

namespace {

const std::vector<std::string_view> kResultsFields = {
    "$comment",         "maxTextChars",   "offload",      "offloadThresholdBytes",
    "maxResponseBytes", "retentionHours", "storeMaxBytes"};
// maxResponseBytes: at least this, room for a few blocks and the notices.
constexpr std::uint64_t kMinResponseBytes = 16384;
// retentionHours: more than 0, at most this (about 114 years, which keeps
// "now + retention" within a nanosecond clock).
constexpr long kMaxRetentionHours = 1000000;

}  // namespace

// "results": how results are limited, offloaded and kept.
ResultLimits read_results(const json& value, Problems& problems) {
  ResultLimits limits;
  ObjectReader reader(value, "/results", problems);
  reader.reject_unknown(kResultsFields);
  reader.string("$comment", false);
  if (const json* chars = reader.field("maxTextChars", false)) {
    if (!chars->is_number_integer()) {
      reader.add(reader.pointer("maxTextChars"), "expected an integer, got " + type_name(*chars));
    } else if (chars->is_number_unsigned() &&
               chars->get<std::uint64_t>() >
                   static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      reader.add(reader.pointer("maxTextChars"),
                 "maxTextChars must be at most " +
                     std::to_string(std::numeric_limits<std::int64_t>::max()) + ", not " +
                     chars->dump());
    } else if (std::int64_t number = chars->get<std::int64_t>(); number == 0 || number < -1) {
      reader.add(reader.pointer("maxTextChars"),
                 "maxTextChars must be -1 (no truncation) or at least 1, not " + chars->dump());
    } else {
      limits.max_text_chars = number;
    }
  }
  if (auto offload = reader.boolean("offload")) limits.offload = *offload;
  if (auto threshold = reader.integer("offloadThresholdBytes", false, 1024,
                                      std::numeric_limits<std::uint64_t>::max())) {
    limits.offload_threshold_bytes = *threshold;
  }
  if (auto response = reader.integer("maxResponseBytes", false, kMinResponseBytes,
                                     std::numeric_limits<std::uint64_t>::max())) {
    limits.max_response_bytes = *response;
  }
  if (const json* hours = reader.field("retentionHours", false)) {
    if (!hours->is_number()) {
      reader.add(reader.pointer("retentionHours"), "expected a number, got " + type_name(*hours));
    } else if (double number = hours->get<double>();
               !(number > 0) || number > static_cast<double>(kMaxRetentionHours)) {
      reader.add(reader.pointer("retentionHours"),
                 "retentionHours must be more than 0 and at most " +
                     std::to_string(kMaxRetentionHours) + ", not " + hours->dump());
    } else {
      // Rounded to whole seconds, at least one.
      auto seconds = static_cast<std::int64_t>(std::llround(number * 3600.0));
      limits.retention = std::chrono::seconds(std::max<std::int64_t>(seconds, 1));
    }
  }
  if (auto store = reader.integer("storeMaxBytes", false, std::uint64_t{1} << 20,
                                  std::numeric_limits<std::uint64_t>::max())) {
    limits.store_max_bytes = *store;
  }
  return limits;
}

}  // namespace toolmux::catalog_file
