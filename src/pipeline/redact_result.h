// The redact_result stage (result): no secret leaves toolmux in a tool's
// answer. In next's answer, whichever tool gave it (toolmux's own error
// messages too), every text block's text, every embedded resource's text and
// every string of structuredContent is redacted (src/base/redact.h), and in
// structuredContent the whole value of a member whose key names a secret.
// Then, for a tool whose spec names classes of personal data
// (ToolSpec::redact_personal_data), the same strings have that personal data
// replaced (src/base/personal_data.h); for any other tool nothing more.
// Images, audio, blobs and resource links pass unchanged. An answer that is
// not a result (cancelled, input_required, a JSON-RPC error) passes untouched.
//
// It comes after check_result, which judged the answer as the tool gave it,
// and before limit_result, so that a secret is never cut in two, nor stored.
// When redaction changed structuredContent and it no longer matches the
// tool's outputSchema (a `pattern` or `format` the redacted text breaks, a
// number under a key that names a secret), the answer becomes a bad_result
// isError result without it (a client that checks the schema would refuse
// it): its redacted blocks stay and a last text block says why. Needs `tool`
// (resolve_tool before it), else CallResult::out_of_order().
#pragma once

#include "src/pipeline/call.h"

namespace toolmux::stages {

CallStage redact_result();

}  // namespace toolmux::stages
