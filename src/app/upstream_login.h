// `toolmux login UPSTREAM` and `toolmux logout UPSTREAM`: a person authorizes
// an HTTP upstream whose "oauth" grant is authorization_code once, and every
// toolmux that serves the catalog on the same store uses (and refreshes) the
// tokens (docs/upstreams.md#login).
//
// login asks the upstream once without a token, and on its 401 takes MCP's
// authorization steps with toolmux's own OAuth client (transports/
// oauth_client.h: Protected Resource Metadata, the authorization server's
// metadata, a client pre-registered or registered now, PKCE S256, `resource`,
// `iss`): it prints the authorization URL (and opens a browser when there is
// a display and no --no-browser), takes the browser's redirect on
// http://127.0.0.1:PORT/callback (the catalog's redirectPort, else a free
// port), exchanges the code and keeps the login in the store
// (src/store/upstream_logins.h). Tokens and secrets are never printed.
// logout forgets the login kept for the name.
#pragma once

#include <memory>
#include <ostream>

#include "src/app/cli.h"
#include "src/store/upstream_logins.h"

namespace toolmux {

// Each prints what it did to `out` and its failure to `err` as
// "toolmux: <why>"; returns 0, 1 when it failed, 2 for a catalog that cannot
// be read.
int run_login(const CommandLine& cl, std::ostream& out, std::ostream& err);
int run_logout(const CommandLine& cl, std::ostream& out, std::ostream& err);

// The logins of the store `options` name (what serve, login, logout and doctor
// use): PostgreSQL's table with --store postgresql, else data_dir/logins.
Result<std::unique_ptr<UpstreamLogins>> open_upstream_logins(const ServeOptions& options);

}  // namespace toolmux
