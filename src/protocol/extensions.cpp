#include "src/protocol/extensions.h"

#include "catalog/skills.h"
#include "src/assembly/tool_catalog.h"
#include "src/pipeline/tasks.h"

namespace toolmux {

nlohmann::json server_extensions(const Catalog& catalog) {
  nlohmann::json out = nlohmann::json::object();
  out[kTasksExtension] = nlohmann::json::object();
  if (catalog.skills) out[kSkillsExtension] = {{"directoryRead", true}};
  return out;
}

}  // namespace toolmux
