// Where this program is, for what toolmux prints about itself: the command a
// client configuration runs (`toolmux import`, serve's first-run guidance)
// and the catalog schema that an imported catalog names in "$schema".
#pragma once

#include <string>

namespace toolmux {

// This program's absolute path (/proc/self/exe); "toolmux" when it cannot be
// found, which a client finds through its PATH.
std::string executable_path();

// The absolute path of catalog.schema.json beside `executable`: installed
// (<prefix>/share/toolmux/catalog.schema.json for <prefix>/bin/toolmux) or in
// the source tree of a build folder (<build>/../schema/catalog.schema.json).
// "" when neither exists.
std::string catalog_schema_path(const std::string& executable);

}  // namespace toolmux
