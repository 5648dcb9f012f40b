// The authorize stage (request): the operator's access rules for the caller's
// principal. A denial is answered with a denied isError result naming the
// rule, without calling next; an allowed call is passed on untouched. Needs
// `tool` (resolve_tool before it), else CallResult::out_of_order().
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage authorize();

}  // namespace toolmux::stages
