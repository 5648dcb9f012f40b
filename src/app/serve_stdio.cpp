#include "src/app/serve_stdio.h"

#include <unistd.h>
#include <csignal>
#include <memory>

#include "catalog/skills.h"
#include "src/app/journal_for.h"
#include "src/app/state_key.h"
#include "src/app/telemetry_for.h"
#include "src/base/random_id.h"
#include "src/protocol/mcp_server.h"
#include "src/protocol/paced_peer.h"
#include "src/session/session.h"
#include "transports/stdio_transport.h"

namespace toolmux {
namespace {

StdioTransport* g_transport = nullptr;

extern "C" void on_stop_signal(int) {
  if (g_transport) g_transport->request_stop();
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: the blocked read must return EINTR
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

}  // namespace

int serve_stdio(CatalogHost& host, const ServeStores& stores, const ServeOptions& options,
                Logger& logger) {
  const auto shared_transport =
      std::make_shared<StdioTransport>(STDIN_FILENO, STDOUT_FILENO, options.max_message_bytes);
  StdioTransport& transport = *shared_transport;
  g_transport = &transport;
  install_signal_handlers();

  Metrics metrics;
  // Spans and metrics over OTLP, while serving (--otlp-endpoint).
  auto telemetry = telemetry_for(options, metrics, logger);
  if (!telemetry.ok()) {
    logger.write(LogLevel::error, "refusing_to_start", {{"reason", telemetry.message()}});
    return 2;
  }
  const std::unique_ptr<OtlpExporter> exporter = std::move(telemetry).value();
  const std::shared_ptr<const Catalog> catalog = host.current();
  ServerOptions server_options = server_options_for(options, stores.results);
  server_options.state_key = state_key_for(options, stores.shared.get(), logger);
  server_options.tasks = stores.tasks;
  server_options.journal = journal_for(options, logger, stores.shared, stores.instance_id);
  McpServer server(catalog, std::move(server_options), logger, metrics);
  // A reload or an upstream's change: served from then on, the client told.
  const int listener = host.add_listener(
      [&server](std::shared_ptr<const Catalog> next) { server.replace_catalog(std::move(next)); });
  // One session for the process. Its id keys the results it offloads, so it
  // is random: a later process on the same data directory cannot read them.
  // The transport is its sink, shared: what holds the session (a call
  // abandoned past its deadline, a list_changed due in 50 ms) may send after
  // serve_stdio has returned, while toolmux stops its upstreams.
  auto session = std::make_shared<Session>(random_id(), "local", "stdio", shared_transport);
  nlohmann::json serving{{"transport", "stdio"}, {"tools", catalog->registry->tools().size()}};
  if (catalog->skills) serving["skills"] = catalog->skills->listing();
  logger.write(LogLevel::info, "serving", serving);

  // One client, whose writes can wait in the pipe: calls past the limits are
  // held until there is room rather than refused as busy.
  PacedPeer peer(server, session, [&transport] { return transport.stop_requested(); });
  transport.serve(peer, server.json_limits());
  // A listen stays open until it is ended: end them before waiting for calls.
  server.end_listens();

  // End of input: the calls already read are still answered. They run until
  // they finish or their own timeout, for --shutdown-grace at most; those
  // still running then are stopped and answered with an error saying toolmux
  // is exiting, and those still held are answered that it is stopping. A
  // stop signal cancels them at once instead (no answers).
  bool drained = false;
  if (!transport.stop_requested()) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(options.shutdown_grace_seconds);
    constexpr auto kSlice = std::chrono::milliseconds(50);  // to notice a signal meanwhile
    while (!drained && !transport.stop_requested() && std::chrono::steady_clock::now() < until) {
      drained = peer.wait_until_handed_on(kSlice) && session->wait_for_calls(kSlice);
    }
    peer.finish(!transport.stop_requested());
    if (!drained && !transport.stop_requested()) session->abort_all_calls();
  }
  peer.finish(false);
  if (!drained && transport.stop_requested()) session->cancel_all_calls();
  // Stopped calls answer within moments (the deadline stage wakes at once,
  // the queue looks every 50 ms); their handlers end soon after (a command's
  // process group is killed).
  const auto stop_wait = std::chrono::milliseconds(2000);
  drained = session->wait_for_calls(stop_wait) && drained;
  drained = server.wait_for_running_tools(stop_wait) && drained;
  // The session has ended: its offloaded results go with it.
  if (ResultStore* store = stores.results->if_open()) store->delete_owner(session->id());
  host.remove_listener(listener);
  logger.write(LogLevel::info, "stopped", {{"calls_drained", drained}});
  return 0;
}

}  // namespace toolmux
