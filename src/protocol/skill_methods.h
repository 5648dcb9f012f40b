// The methods of the io.modelcontextprotocol/skills extension (SEP-2640,
// docs/skills.md), served from the SkillSet of the catalog the server
// serves now: skills/list (every skill's entry, one page), skills/get {uri}
// (one entry; -32602 for a URI that is no skill's SKILL.md) and
// resources/directory/read {uri} (a skill folder's direct children; -32602
// for a URI that is not one). While the catalog serves no skills each is
// -32601. Answered on the reader's thread: everything is in memory.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/base/jsonrpc.h"
#include "src/session/session.h"

namespace toolmux {

struct Catalog;

using SkillMethod = std::function<void(const jsonrpc::Message&, const std::shared_ptr<Session>&)>;

// Method name and handler, for the server's method table.
std::vector<std::pair<std::string, SkillMethod>> skill_methods(
    const std::function<std::shared_ptr<const Catalog>()>& catalog);

}  // namespace toolmux
