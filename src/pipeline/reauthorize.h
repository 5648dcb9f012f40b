// The reauthorize stage (handler group, after confirm and before
// verify_confirmation, so that a call refused here does not spend its
// confirmation): a call that waited for a human's confirmation is judged
// again, by call_refusal, against the catalog serving now (`serving`): a
// write freeze or an access rule that came while the person took their time
// refuses it, with the same denied isError result as authorize gives, and the
// tool does not run. A call that asked no one goes on at once: authorize
// judged it a moment ago. Null `serving` passes every call.
#pragma once

#include <functional>
#include <memory>

#include "src/pipeline/call.h"

namespace toolmux::stages {

using CatalogSource = std::function<std::shared_ptr<const Catalog>()>;

CallStage reauthorize(CatalogSource serving);

}  // namespace toolmux::stages
