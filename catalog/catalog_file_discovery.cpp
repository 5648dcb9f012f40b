#include "catalog/catalog_file_sections.h"

#include "catalog/catalog_file_reader.h"

namespace toolmux::catalog_file {

namespace {

const std::vector<std::string_view> kDiscoveryFields = {"$comment", "mode", "pinned"};

}  // namespace

// "discovery": which tools tools/list shows.
DiscoverySettings read_discovery(const json& value, Problems& problems) {
  DiscoverySettings discovery;
  ObjectReader reader(value, "/discovery", problems);
  reader.reject_unknown(kDiscoveryFields);
  reader.string("$comment", false);
  if (auto mode = reader.string("mode", false)) {
    if (*mode == "auto") {
      discovery.mode = DiscoverySettings::Mode::automatic;
    } else if (*mode == "on") {
      discovery.mode = DiscoverySettings::Mode::on;
    } else if (*mode == "off") {
      discovery.mode = DiscoverySettings::Mode::off;
    } else {
      reader.add(reader.pointer("mode"),
                 "mode must be \"auto\", \"on\" or \"off\", not " + json(*mode).dump());
    }
  }
  if (auto pinned = reader.strings("pinned", false)) discovery.pinned = std::move(*pinned);
  return discovery;
}

}  // namespace toolmux::catalog_file
