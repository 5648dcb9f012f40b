#include "src/app/upstream_login.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <httplib.h>

#include "catalog/catalog_file.h"
#include "src/app/shared_store.h"
#include "src/base/problem.h"
#include "src/base/terminal_text.h"
#include "src/store/lazy_result_store.h"
#include "src/store/upstream_logins.h"
#include "transports/oauth_client.h"
#include "transports/oauth_rules.h"
#include "transports/url.h"

extern char** environ;

namespace toolmux {
namespace {

constexpr auto kProbeTimeout = std::chrono::seconds(10);

// The catalog's upstream `name`, which must be an HTTP one whose grant is
// authorization_code; or why not.
Result<UpstreamSpec> login_upstream(const CommandLine& cl, std::ostream& err, bool& unreadable) {
  CatalogLoad load = load_catalog_file(cl.serve.catalog_file);
  if (!load.problems.empty()) {
    unreadable = true;
    err << "toolmux: " << terminal_text(cl.serve.catalog_file.string()) << " has "
        << load.problems.size() << (load.problems.size() == 1 ? " problem" : " problems") << ":\n"
        << format_problems(load.problems);
    return Status::invalid_argument("");
  }
  std::string names;
  for (const UpstreamSpec& spec : load.catalog.upstreams) {
    if (spec.name == cl.login_upstream) {
      if (spec.url.empty()) {
        return Status::invalid_argument("upstream \"" + spec.name +
                                        "\" is a stdio server: only an HTTP one (\"url\") logs in");
      }
      if (!spec.oauth || spec.oauth->grant != UpstreamOAuth::Grant::authorization_code) {
        return Status::invalid_argument(
            "upstream \"" + spec.name +
            "\" has no \"oauth\" with \"grant\": \"authorization_code\" in the catalog, so "
            "toolmux would not use a login for it (docs/upstreams.md#login)");
      }
      return spec;
    }
    names += (names.empty() ? "" : ", ") + spec.name;
  }
  return Status::not_found(
      "the catalog has no upstream named \"" + cl.login_upstream + "\"" +
      (names.empty() ? std::string(" (it has none)") : " (it has: " + names + ")"));
}

// The browser's redirect, taken once on a loopback port.
class RedirectCatcher {
 public:
  // Listens on 127.0.0.1:port (0 = a free one).
  Status listen(int port) {
    server_.Get("/callback", [this](const httplib::Request& req, httplib::Response& res) {
      const auto query = req.target.find('?');
      {
        std::lock_guard lock(mutex_);
        if (query_) {
          res.status = 409;
          res.set_content("toolmux: this login has already been answered.\n", "text/plain");
          return;
        }
        query_ = query == std::string::npos ? std::string() : req.target.substr(query + 1);
      }
      came_.notify_all();
      res.set_content(
          "<!doctype html><meta charset=\"utf-8\"><title>toolmux login</title>"
          "<p>toolmux has the answer of the authorization server; the terminal says whether "
          "the login worked. This tab may be closed.</p>",
          "text/html; charset=utf-8");
    });
    bound_port_ = port == 0 ? server_.bind_to_any_port("127.0.0.1")
                            : (server_.bind_to_port("127.0.0.1", port) ? port : -1);
    if (bound_port_ <= 0) {
      return Status::unavailable("cannot listen on 127.0.0.1" +
                                 (port == 0 ? std::string() : ":" + std::to_string(port)) +
                                 " for the browser's redirect (is the port in use?)");
    }
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // A stop() before the thread listens would be lost, and the join in the
    // destructor would wait forever (a login that fails at once).
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::ok_status();
  }

  ~RedirectCatcher() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string redirect_uri() const {
    return "http://127.0.0.1:" + std::to_string(bound_port_) + "/callback";
  }

  // The redirect's query, or nullopt after `timeout`.
  std::optional<std::string> wait(std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    came_.wait_for(lock, timeout, [this] { return query_.has_value(); });
    return query_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int bound_port_ = -1;
  std::mutex mutex_;
  std::condition_variable came_;
  std::optional<std::string> query_;
};

// Starts xdg-open on `url` when there is a display; its output goes nowhere
// and nothing waits for it.
void open_browser(const std::string& url) {
  if (std::getenv("DISPLAY") == nullptr && std::getenv("WAYLAND_DISPLAY") == nullptr) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const int fd : {0, 1, 2}) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  std::string program = "xdg-open";
  std::string argument = url;
  char* argv[] = {program.data(), argument.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "xdg-open", &actions, nullptr, argv, environ) == 0) {
    // Reaped by a thread of its own, so that it leaves no zombie.
    std::thread([pid] {
      int status = 0;
      ::waitpid(pid, &status, 0);
    }).detach();
  }
  posix_spawn_file_actions_destroy(&actions);
}

struct Probe {
  int status = 0;
  std::string www_authenticate;
};

// The upstream asked without a token (an initialize request): its status and
// challenge.
Result<Probe> probe(const std::string& url) {
  if (Status secure = require_secure_url(url, "the upstream's URL"); !secure.ok()) return secure;
  auto parsed = parse_http_url(url);
  if (!parsed.ok()) return parsed.status();
  httplib::Client client(parsed->origin);
  client.set_connection_timeout(kProbeTimeout);
  client.set_read_timeout(kProbeTimeout);
  client.set_write_timeout(kProbeTimeout);
  client.set_follow_location(false);
  const std::string body =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
      R"("capabilities":{},"clientInfo":{"name":"toolmux login","version":"1"}}})";
  httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                              {"MCP-Protocol-Version", "2025-11-25"}};
  auto res = client.Post(parsed->path, headers, body, "application/json");
  if (!res) {
    return Status::unavailable("no answer from " + parsed->shown + ": " +
                               httplib::to_string(res.error()));
  }
  return Probe{res->status, res->get_header_value("WWW-Authenticate")};
}

}  // namespace

Result<std::unique_ptr<UpstreamLogins>> open_upstream_logins(const ServeOptions& options) {
  if (options.store == StoreKind::postgresql) {
    auto shared = open_shared_store(options);
    if (!shared.ok()) return shared.status();
    return pg_logins(std::move(shared).value());
  }
  return login_files(options.data_dir.empty() ? default_data_dir() : options.data_dir);
}

int run_login(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  bool unreadable = false;
  auto spec = login_upstream(cl, err, unreadable);
  if (unreadable) return 2;
  if (!spec.ok()) {
    err << "toolmux: " << terminal_text(spec.message()) << "\n";
    return 1;
  }
  auto logins = open_upstream_logins(cl.serve);
  if (!logins.ok()) {
    err << "toolmux: " << terminal_text(logins.message()) << "\n";
    return 1;
  }
  RedirectCatcher catcher;
  if (Status listening = catcher.listen(spec->oauth->redirect_port); !listening.ok()) {
    err << "toolmux: " << listening.message() << "\n";
    return 1;
  }
  const auto timeout = std::chrono::seconds(cl.login_timeout_seconds);
  Status kept = Status::ok_status();
  bool written = false;
  OAuthClient::Options options;
  options.server_url = spec->url;
  options.grant = OAuthClient::Grant::authorization_code;
  options.client_id = spec->oauth->client_id;
  options.client_secret = spec->oauth->client_secret;
  options.token_endpoint_auth_method = spec->oauth->token_endpoint_auth_method;
  options.issuer = spec->oauth->issuer;
  options.redirect_uri = catcher.redirect_uri();
  options.authorize = [&](const std::string& authorization_url,
                          const std::string& redirect_uri) -> Result<std::string> {
    out << "To log in to upstream \"" << spec->name << "\", open this URL in a browser:\n\n  "
        << terminal_text(authorization_url) << "\n\n"
        << "toolmux waits " << timeout.count() << " s for the redirect to " << redirect_uri << ".\n"
        << std::flush;
    if (!cl.login_no_browser) open_browser(authorization_url);
    auto query = catcher.wait(timeout);
    if (!query) {
      return Status::unavailable("no redirect came to " + redirect_uri + " within " +
                                 std::to_string(timeout.count()) + " s");
    }
    return redirect_uri + "?" + *query;
  };
  options.on_login = [&](const std::string& login) {
    kept = (*logins)->write(spec->name, login);
    written = kept.ok();
  };
  auto client = OAuthClient::create(std::move(options));
  if (!client.ok()) {
    err << "toolmux: " << terminal_text(client.message()) << "\n";
    return 1;
  }
  auto asked = probe(spec->url);
  if (!asked.ok()) {
    err << "toolmux: " << terminal_text(asked.message()) << "\n";
    return 1;
  }
  if (asked->status != 401) {
    const bool fine = asked->status >= 200 && asked->status < 300;
    (fine ? out : err) << (fine ? "" : "toolmux: ") << "upstream \"" << spec->name
                       << "\" answered HTTP " << asked->status << " without a token"
                       << (fine ? ": it needs no login." : ", not 401: nothing to log in to.")
                       << "\n";
    return fine ? 0 : 1;
  }
  const Status done = (*client)->challenged(401, asked->www_authenticate, "");
  if (!done.ok()) {
    err << "toolmux: the login failed: " << terminal_text(done.message()) << "\n";
    return 1;
  }
  if (!written) {
    err << "toolmux: logged in, but the login could not be kept in " << (*logins)->where() << ": "
        << terminal_text(kept.message()) << "\n";
    return 1;
  }
  out << "Logged in to upstream \"" << spec->name << "\"; the login is kept in "
      << terminal_text((*logins)->where())
      << ". Servers on this store use it from their next start of the upstream.\n";
  return 0;
}

int run_logout(const CommandLine& cl, std::ostream& out, std::ostream& err) {
  auto logins = open_upstream_logins(cl.serve);
  if (!logins.ok()) {
    err << "toolmux: " << terminal_text(logins.message()) << "\n";
    return 1;
  }
  auto removed = (*logins)->remove(cl.login_upstream);
  if (!removed.ok()) {
    err << "toolmux: " << terminal_text(removed.message()) << "\n";
    return 1;
  }
  out << (*removed ? "Logged out of upstream \"" : "No login was kept for upstream \"")
      << terminal_text(cl.login_upstream) << "\" in " << terminal_text((*logins)->where()) << ".\n";
  return 0;
}

}  // namespace toolmux
