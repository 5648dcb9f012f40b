#include "transports/http_client_transport.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <list>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "src/base/ascii.h"
#include "src/base/jsonrpc.h"
#include "transports/modern_http_headers.h"
#include "transports/sse_parser.h"
#include "transports/url.h"

namespace toolmux {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

// cpp-httplib names its errors by enum ("Connection"): say what happened.
std::string error_text(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect (refused, or nothing listens there)";
    case httplib::Error::ConnectionTimeout:
      return "the connection timed out";
    case httplib::Error::Read:
      return "reading the response failed";
    case httplib::Error::Write:
      return "sending the request failed";
    case httplib::Error::SSLConnection:
      return "the TLS connection failed";
    case httplib::Error::SSLServerVerification:
      return "the server's TLS certificate did not verify";
    default:
      return httplib::to_string(error);
  }
}

// A POST's answer may take as long as the call it carries; close() and the
// caller's own deadline (it sends notifications/cancelled) end it sooner.
constexpr auto kPostReadTimeout = std::chrono::hours(1);
// The GET stream is reopened (with Last-Event-ID) after this long without a
// byte: a connection that died silently does not stay open for ever.
constexpr auto kListenReadTimeout = std::chrono::minutes(5);
// A request's broken event stream is resumed at most this many times in a
// row without an event coming in between.
constexpr int kMaxResumeAttempts = 5;
// How long requests after notifications/initialized wait, once, for the GET
// stream to be answered: a server that answers it only with its first event
// costs this once, not a wait per request.
constexpr auto kStreamWait = std::chrono::seconds(2);
constexpr std::size_t kMaxErrorBody = 4096;  // of an HTTP error's body, kept for its message
constexpr int kTransportError = -32000;

std::string reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

bool success(int status) { return status >= 200 && status < 300; }

// Runs `run` when it goes out of scope, unless cancelled.
class OnExit {
 public:
  explicit OnExit(std::function<void()> run) : run_(std::move(run)) {}
  ~OnExit() {
    if (run_) run_();
  }
  OnExit(const OnExit&) = delete;
  OnExit& operator=(const OnExit&) = delete;
  void cancel() { run_ = nullptr; }

 private:
  std::function<void()> run_;
};

// What one outgoing message is: a request (it has a method and an id) waits
// for a response; a notification or a response gets 202.
struct Outgoing {
  bool request = false;
  json id;
  std::string method;
  // A 2026-07-28 request: its headers, no session, its stream its own.
  std::optional<ModernHeaders> modern;
  // A 2026-07-28 request's headers of its own (Mcp-Param-*).
  std::vector<std::pair<std::string, std::string>> extra_headers;
};

Outgoing classify(const std::string& text) {
  Outgoing out;
  const json m = json::parse(text, nullptr, false);
  if (!m.is_object()) return out;
  out.modern = modern_headers(m);
  if (const auto method = m.find("method"); method != m.end() && method->is_string()) {
    out.method = method->get<std::string>();
    if (const auto id = m.find("id"); id != m.end() && !id->is_null()) {
      out.request = true;
      out.id = *id;
    }
  }
  return out;
}

// Whether `text` is the response to request `id`.
// (A flat scan, not a parse: the event may be nested deeper than a parse
// should follow; the caller's boundary parser judges it.)
bool is_response_to(std::string_view text, const json& id) {
  const jsonrpc::MessageHeader header = jsonrpc::scan_message_header(text);
  return header.object && !header.has_method && header.id == id;
}

// Exponential backoff from `first`, doubling, capped at `cap`.
milliseconds backoff(int failures, milliseconds first, milliseconds cap) {
  milliseconds delay = first;
  for (int i = 0; i < failures && delay < cap; ++i) delay *= 2;
  return std::min(delay, cap);
}

// The "message" of an HTTP error's body when it is a JSON-RPC error (as MCP
// servers send), cut short; empty otherwise.
std::string server_says(const std::string& body) {
  const json m = json::parse(body, nullptr, false);
  if (!m.is_object() || !m.contains("error") || !m["error"].is_object()) return "";
  const json& message = m["error"].value("message", json());
  if (!message.is_string()) return "";
  std::string text = message.get<std::string>();
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  return text;
}

// The error object of an HTTP error's body when it is a JSON-RPC error
// response (a 2026-07-28 server answers -32022, -32020, -32601 so); null
// otherwise.
json error_of(const std::string& body) {
  const json m = json::parse(body, nullptr, false);
  if (!m.is_object() || !m.contains("error")) return nullptr;
  const json& error = m["error"];
  if (!error.is_object() || !error.contains("code") || !error["code"].is_number_integer()) {
    return nullptr;
  }
  return error;
}

}  // namespace

struct HttpClientTransport::State : std::enable_shared_from_this<State> {
  struct Worker {
    std::thread thread;
    bool one_way = false;                     // POSTs a notification or a response
    bool done = false;                        // under mutex
    std::shared_ptr<httplib::Client> client;  // its request in flight, under mutex
    // A 2026-07-28 request's POST: its id, and whether end_request_stream
    // ended it (nothing more of it is handed over).
    json modern_id;
    std::atomic<bool> ended{false};
  };

  // What one HTTP exchange brought back.
  struct Reception {
    int status = 0;  // 0: no response came
    enum class Body { none, json_body, sse } body = Body::none;
    std::string text;  // the JSON body, or the start of an error's body
    bool too_large = false;
    httplib::Error error = httplib::Error::Success;
    std::string www_authenticate;  // of a 401 or 403
  };

  HttpClientOptions options;
  HttpUrl url;
  OnMessage on_message;
  OnClosed on_closed;

  mutable std::mutex mutex;
  std::condition_variable changed;
  bool started = false;
  bool closing = false;      // close() was called
  bool closed = false;       // close() has finished
  bool gone = false;         // on_closed was called (or is being called)
  bool in_callback = false;  // a callback runs: the next waits
  bool listening = false;    // the GET stream was started
  // notifications/initialized was sent and the GET stream it opens has not
  // been answered yet: requests wait for it (at most kStreamWait), so
  // that what the server sends on that stream about them is not sent before
  // the stream exists (a server drops what it has no stream for) and
  // initialized comes before them, as the lifecycle says.
  bool stream_opening = false;
  std::string session_id;
  std::string protocol_version;
  std::list<std::shared_ptr<Worker>> workers;
  // closing || gone, for checks on every chunk received.
  std::atomic<bool> stopping{false};

  // --- callbacks, one at a time, none once closing or gone ---

  template <typename F>
  bool callback(F&& run, bool closes) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return !in_callback || closing || gone; });
    if (closing || gone) return false;
    in_callback = true;
    if (closes) {
      gone = true;
      stopping = true;
    }
    lock.unlock();
    try {
      run();
    } catch (...) {  // a callback that throws must not end the transport's thread
    }
    lock.lock();
    in_callback = false;
    changed.notify_all();
    return true;
  }

  bool deliver(std::string_view text) {
    return callback([&] { on_message(text); }, false);
  }

  void lose(const std::string& reason) {
    callback([&] { on_closed(reason); }, true);
  }

  void warn(const std::string& warning) {
    if (options.on_warning) callback([&] { options.on_warning(warning); }, false);
  }

  // A request's answer will not come: the caller gets an error response in
  // its place. For anything else there is only the warning.
  void fail(const Outgoing& out, int status, const std::string& message) {
    if (!out.request) {
      warn(message);
      return;
    }
    json data = status == 0 ? json() : json{{"httpStatus", status}};
    deliver(jsonrpc::make_error(out.id, kTransportError, message, std::move(data)).dump());
  }

  std::string request_name(const Outgoing& out) const {
    return out.method + " (id " + out.id.dump() + ")";
  }

  // --- threads ---

  // Starts `job` on a thread of its own. False when the transport is closing,
  // when no thread can be had, or for a `one_way` job (a notification or a
  // response) when max_notifications_in_flight of them are under way: the
  // upstream decides how many requests toolmux answers, and how long each
  // answer's POST takes.
  bool spawn(std::function<void(const std::shared_ptr<Worker>&)> job, bool one_way = false,
             const json& modern_id = nullptr) {
    std::vector<std::shared_ptr<Worker>> finished;
    {
      std::lock_guard lock(mutex);
      if (closing || gone) return false;
      std::size_t one_way_running = 0;
      for (auto it = workers.begin(); it != workers.end();) {
        if ((*it)->done) {
          finished.push_back(*it);
          it = workers.erase(it);
        } else {
          one_way_running += (*it)->one_way ? 1 : 0;
          ++it;
        }
      }
      if (one_way && one_way_running >= options.max_notifications_in_flight) return false;
      auto worker = std::make_shared<Worker>();
      worker->one_way = one_way;
      worker->modern_id = modern_id;
      try {
        worker->thread = std::thread([self = shared_from_this(), worker, job = std::move(job)] {
          try {
            job(worker);
          } catch (...) {  // nothing may escape a thread; what failed was already reported
          }
          std::lock_guard done_lock(self->mutex);
          worker->done = true;
          worker->client.reset();
          self->changed.notify_all();
        });
      } catch (const std::system_error&) {
        return false;  // no thread to be had
      }
      workers.push_back(std::move(worker));
    }
    for (auto& w : finished) w->thread.join();
    return true;
  }

  // Waits `delay`; false when the transport stopped meanwhile.
  bool pause(milliseconds delay) {
    std::unique_lock lock(mutex);
    return !changed.wait_for(lock, delay, [&] { return closing || gone; });
  }

  // A client for one request of `worker`, which close() can stop; null when closing.
  std::shared_ptr<httplib::Client> client_for(const std::shared_ptr<Worker>& worker,
                                              milliseconds read_timeout) {
    auto client = std::make_shared<httplib::Client>(url.origin);
    client->set_connection_timeout(options.connect_timeout);
    client->set_read_timeout(read_timeout);
    client->set_keep_alive(false);
    if (!url.user.empty()) client->set_basic_auth(url.user, url.password);
    std::lock_guard lock(mutex);
    if (closing || gone || worker->ended) return nullptr;
    worker->client = client;
    return client;
  }

  // end_request_stream: stops the POST of 2026-07-28 request `id`.
  bool end_stream(const json& id) {
    std::shared_ptr<httplib::Client> client;
    {
      std::lock_guard lock(mutex);
      auto it = std::find_if(workers.begin(), workers.end(), [&](const auto& w) {
        return !w->modern_id.is_null() && w->modern_id == id;
      });
      if (it == workers.end()) return false;
      (*it)->ended = true;
      client = (*it)->client;
    }
    if (client) client->stop();
    return true;
  }

  // The configured headers and the session's; `with_session` says whether
  // the session id went with them. A 2026-07-28 request (`modern`) has no
  // session and carries its own version, method and name.
  httplib::Headers headers(bool& with_session, const ModernHeaders* modern = nullptr) const {
    httplib::Headers h;
    for (const auto& [name, value] : options.headers) {
      // The transport's own headers are not the configuration's to set.
      bool ours = false;
      for (std::string_view own :
           {"content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id",
            "mcp-method", "mcp-name"}) {
        ours |= ascii_iequals(name, own);
      }
      if (!ours) h.emplace(name, value);
    }
    if (options.authorizer) {
      if (std::string value = options.authorizer->authorization(); !value.empty()) {
        h.erase("Authorization");
        h.emplace("Authorization", std::move(value));
      }
    }
    if (modern != nullptr) {
      with_session = false;
      h.emplace("MCP-Protocol-Version", modern->protocol_version);
      h.emplace("Mcp-Method", modern->method);
      if (modern->name) h.emplace("Mcp-Name", *modern->name);
      return h;
    }
    std::lock_guard lock(mutex);
    with_session = !session_id.empty();
    if (with_session) h.emplace("Mcp-Session-Id", session_id);
    if (!protocol_version.empty()) h.emplace("MCP-Protocol-Version", protocol_version);
    return h;
  }

  // A request to the endpoint with the configured and session headers;
  // `accept` is what it takes back, `last_id` resumes a stream (GET).
  httplib::Request request_to_endpoint(const char* method, const char* accept,
                                       const std::string& last_id, bool& with_session,
                                       const ModernHeaders* modern = nullptr) const {
    httplib::Request req;
    req.method = method;
    req.path = url.path;
    req.headers = headers(with_session, modern);
    req.headers.emplace("Accept", accept);
    if (!last_id.empty()) req.headers.emplace("Last-Event-ID", last_id);
    return req;
  }

  // Sends `req` with `client` and reads what comes back: an error's body, a
  // JSON body, or an event stream whose events go to `on_event` as they
  // arrive. `take_session`: the response's Mcp-Session-Id becomes the session's.
  Reception exchange(httplib::Client& client, httplib::Request& req, SseParser& parser,
                     const std::function<bool(const SseEvent&)>& on_event, bool take_session,
                     const std::function<void()>& on_headers = nullptr) {
    Reception r;
    req.response_handler = [&](const httplib::Response& res) {
      if (on_headers) on_headers();
      if (stopping) return false;
      r.status = res.status;
      if (res.status == 401 || res.status == 403) {
        r.www_authenticate = res.get_header_value("WWW-Authenticate");
      }
      if (!success(res.status)) return true;
      if (take_session && res.has_header("Mcp-Session-Id")) {
        std::lock_guard lock(mutex);
        session_id = res.get_header_value("Mcp-Session-Id");
      }
      const std::string type = ascii_lower(res.get_header_value("Content-Type"));
      if (type.find("text/event-stream") != std::string::npos) {
        r.body = Reception::Body::sse;
      } else if (type.find("application/json") != std::string::npos) {
        r.body = Reception::Body::json_body;
      }
      return true;
    };
    req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t, std::uint64_t) {
      if (stopping) return false;
      if (!success(r.status)) {
        r.text.append(data, std::min(size, kMaxErrorBody - std::min(kMaxErrorBody, r.text.size())));
        return true;
      }
      switch (r.body) {
        case Reception::Body::sse:
          if (parser.feed(std::string_view(data, size), on_event)) return true;
          r.too_large = !stopping;  // on_event refuses only once the transport stopped
          return false;
        case Reception::Body::json_body:
          if (size > options.max_message_bytes - r.text.size()) {
            r.too_large = true;
            return false;
          }
          r.text.append(data, size);
          return true;
        case Reception::Body::none:
          return false;
      }
      return false;
    };
    auto result = client.send(req);
    r.error = result.error();
    return r;
  }

  // The event handler of a request's stream: every message goes on, and the
  // request's own response is noticed.
  std::function<bool(const SseEvent&)> events_of(const Outgoing& out, bool& answered,
                                                 const Worker& worker) {
    return [this, &out, &answered, &worker](const SseEvent& e) {
      if (worker.ended) return false;
      if (!e.type.empty() && e.type != "message") return true;
      if (out.request && !answered && is_response_to(e.data, out.id)) answered = true;
      return deliver(e.data);
    };
  }

  // An HTTP error status for `out`.
  void http_error(const Outgoing& out, const Reception& r, bool with_session,
                  const std::string& doing) {
    if (r.status == 404 && with_session) {
      lose("the session with " + url.shown +
           " has expired or was ended by the server (HTTP 404 Not Found)");
      return;
    }
    std::string message = "HTTP " + std::to_string(r.status);
    if (const std::string reason = reason_phrase(r.status); !reason.empty())
      message += " " + reason;
    message += " from " + url.shown + " " + doing;
    if (r.status == 401 || r.status == 403) {
      message += " (check the credentials configured for it)";
    }
    if (const std::string said = server_says(r.text); !said.empty()) message += ": " + said;
    fail(out, r.status, message);
  }

  void deliver_body(const std::string& body) {
    // A batch is split as text, never parsed here: a member nested too deep
    // to rebuild reaches the caller's boundary parser as it came.
    if (auto members = jsonrpc::batch_members(body)) {
      for (std::string_view member : *members) {
        if (!deliver(member)) return;
      }
      return;
    }
    deliver(body);
  }

  void post(const std::shared_ptr<Worker>& worker, const std::string& text, const Outgoing& out) {
    // notifications/initialized that opens no stream (it failed, or the
    // transport stops) releases the requests waiting for one.
    OnExit opens_stream([this, &out] {
      if (out.method == "notifications/initialized") stream_open();
    });
    auto client = client_for(worker, kPostReadTimeout);
    if (!client) return;
    bool with_session = false;
    bool answered = false;
    SseParser parser(options.max_message_bytes);
    Reception r;
    const std::string doing = out.request ? "to " + request_name(out) : "to " + out.method;
    if (out.request && !out.modern) {
      std::unique_lock lock(mutex);
      if (!changed.wait_for(lock, std::min<milliseconds>(options.connect_timeout, kStreamWait),
                            [&] { return !stream_opening || closing || gone; })) {
        stream_opening = false;  // waited long enough: no request waits for it again
      }
    }
    for (int retries = 0;; ++retries) {
      httplib::Request req = request_to_endpoint("POST", "application/json, text/event-stream", "",
                                                 with_session, out.modern ? &*out.modern : nullptr);
      req.headers.emplace("Content-Type", "application/json");
      for (const auto& [name, value] : out.extra_headers) req.headers.emplace(name, value);
      req.body = text;
      const std::string sent = req.get_header_value("Authorization");
      r = exchange(*client, req, parser, events_of(out, answered, *worker),
                   out.method == "initialize");
      if (stopping || worker->ended) return;
      if (!options.authorizer || (r.status != 401 && r.status != 403)) break;
      if (retries == kMaxAuthorizationRetries) {
        fail(out, r.status,
             "HTTP " + std::to_string(r.status) + " " + reason_phrase(r.status) + " from " +
                 url.shown + " " + doing + " after " + std::to_string(retries) +
                 " authorizations: giving up");
        return;
      }
      const Status authorized = options.authorizer->challenged(r.status, r.www_authenticate, sent);
      if (stopping || worker->ended) return;
      if (!authorized.ok()) {
        fail(out, r.status, authorized.message());
        return;
      }
      client = client_for(worker, kPostReadTimeout);
      if (!client) return;
    }
    if (r.status == 0) {
      switch (r.error) {
        case httplib::Error::Connection:
        case httplib::Error::ConnectionTimeout:
        case httplib::Error::BindIPAddress:
        case httplib::Error::SSLConnection:
        case httplib::Error::SSLServerVerification:
          lose("cannot reach " + url.shown + ": " + error_text(r.error));
          return;
        default:
          fail(out, 0, "no answer from " + url.shown + " " + doing + ": " + error_text(r.error));
          return;
      }
    }
    if (!success(r.status)) {
      // A 2026-07-28 server says why in a JSON-RPC error (-32022 with the
      // versions it supports, -32020, -32601 with 404): that is the answer.
      if (json error = out.modern ? error_of(r.text) : json(); !error.is_null()) {
        deliver(json{{"jsonrpc", "2.0"}, {"id", out.id}, {"error", std::move(error)}}.dump());
        return;
      }
      http_error(out, r, with_session, doing);
      return;
    }
    if (out.method == "notifications/initialized") {
      listen();
      opens_stream.cancel();  // the GET stream's answer releases the requests now
    }
    if (r.too_large) {
      fail(out, r.status,
           "the answer from " + url.shown + " " + doing + " is over the limit of " +
               std::to_string(options.max_message_bytes) + " bytes");
      return;
    }
    switch (r.body) {
      case Reception::Body::json_body:
        if (r.error != httplib::Error::Success) {
          fail(out, r.status,
               "the answer from " + url.shown + " " + doing + " broke off: " + error_text(r.error));
        } else if (r.text.find_first_not_of(" \t\r\n") == std::string::npos) {
          fail(out, r.status, "an empty JSON body from " + url.shown + " " + doing);
        } else {
          deliver_body(r.text);
        }
        return;
      case Reception::Body::sse:
        if (out.request && !answered) {
          if (out.modern) {
            // 2026-07-28 streams are not resumable.
            fail(out, r.status,
                 "the event stream from " + url.shown + " for " + request_name(out) +
                     " ended before the response");
            return;
          }
          resume(worker, out, parser.last_event_id(), parser.retry(), answered);
        }
        return;
      case Reception::Body::none:
        // 202 Accepted: nothing to read (a request cancelled meanwhile gets it too).
        if (out.request && r.status != 202) {
          fail(out, r.status,
               "HTTP " + std::to_string(r.status) + " from " + url.shown + " " + doing +
                   " came without a JSON or event-stream body");
        }
        return;
    }
  }

  // The event stream of request `out` ended before its response: GET with
  // Last-Event-ID until the response comes, a few failures at most.
  void resume(const std::shared_ptr<Worker>& worker, const Outgoing& out, std::string last_id,
              std::optional<milliseconds> retry, bool& answered) {
    const std::string what = "the event stream from " + url.shown + " for " + request_name(out);
    int failures = 0;
    while (!answered) {
      if (last_id.empty()) {
        fail(out, 0, what + " ended before the response, with no event id to resume it from");
        return;
      }
      if (failures >= kMaxResumeAttempts) {
        fail(out, 0,
             what + " ended before the response and could not be resumed (" +
                 std::to_string(kMaxResumeAttempts) + " attempts)");
        return;
      }
      // The spec has the client respect the server's retry field.
      if (!pause(retry.value_or(backoff(failures, milliseconds(500), milliseconds(10000))))) {
        return;
      }
      auto client = client_for(worker, kPostReadTimeout);
      if (!client) return;
      bool with_session = false;
      httplib::Request req = request_to_endpoint("GET", "text/event-stream", last_id, with_session);
      SseParser parser(options.max_message_bytes);
      const Reception r = exchange(*client, req, parser, events_of(out, answered, *worker), false);
      if (stopping) return;
      if (r.status == 0) {
        ++failures;
        continue;
      }
      if (!success(r.status)) {
        http_error(out, r, with_session, "resuming the event stream of " + request_name(out));
        return;
      }
      if (r.body != Reception::Body::sse) {
        fail(out, r.status, what + ": resuming it did not give an event stream");
        return;
      }
      if (r.too_large) {
        fail(out, r.status,
             what + " has an event over the limit of " + std::to_string(options.max_message_bytes) +
                 " bytes");
        return;
      }
      const bool moved = !parser.last_event_id().empty() && parser.last_event_id() != last_id;
      if (moved) last_id = parser.last_event_id();
      failures = moved ? 0 : failures + 1;
      if (parser.retry()) retry = parser.retry();
    }
  }

  // Opens the GET stream once, for messages the server sends unprompted.
  // The GET stream is answered (or will not be): requests go on.
  void stream_open() {
    {
      std::lock_guard lock(mutex);
      if (!stream_opening) return;
      stream_opening = false;
    }
    changed.notify_all();
  }

  void listen() {
    {
      std::lock_guard lock(mutex);
      if (listening) return;
      listening = true;
    }
    spawn([self = shared_from_this()](const std::shared_ptr<Worker>& worker) {
      self->listen_loop(worker);
    });
  }

  void listen_loop(const std::shared_ptr<Worker>& worker) {
    const Outgoing none;
    std::string last_id;
    std::optional<milliseconds> retry;
    int failures = 0;
    bool warned = false;
    const auto events = [this](const SseEvent& e) {
      if (!e.type.empty() && e.type != "message") return true;
      return deliver(e.data);
    };
    while (!stopping) {
      auto client = client_for(worker, kListenReadTimeout);
      if (!client) return;
      bool with_session = false;
      httplib::Request req = request_to_endpoint("GET", "text/event-stream", last_id, with_session);
      SseParser parser(options.max_message_bytes);
      const Reception r = exchange(*client, req, parser, events, false, [this] { stream_open(); });
      stream_open();  // also when no answer came
      if (stopping) return;
      if (r.status == 405) return;  // the server offers no stream: fine
      if (r.status == 404 && with_session) {
        http_error(none, r, with_session, "");
        return;
      }
      std::string problem;
      if (r.status == 0) {
        problem = error_text(r.error);
      } else if (r.status == 400 && !last_id.empty()) {
        last_id.clear();  // the server no longer knows the stream: a new one
      } else if (!success(r.status)) {
        problem = "HTTP " + std::to_string(r.status) + " " + reason_phrase(r.status);
      } else if (r.body != Reception::Body::sse) {
        problem = "not an event stream";
      } else if (r.too_large) {
        problem =
            "an event over the limit of " + std::to_string(options.max_message_bytes) + " bytes";
      }
      const bool moved = !parser.last_event_id().empty() && parser.last_event_id() != last_id;
      if (moved) last_id = parser.last_event_id();
      if (parser.retry()) retry = parser.retry();
      if (!problem.empty() && !warned) {
        warned = true;
        warn("the event stream from " + url.shown + " failed (" + problem +
             "); reconnecting with backoff");
      }
      if (moved && problem.empty()) {
        failures = 0;
        warned = false;
      } else {
        ++failures;
      }
      const milliseconds wait = problem.empty() && retry
                                    ? *retry
                                    : backoff(failures, milliseconds(1000), milliseconds(30000));
      if (!pause(wait)) return;
    }
  }

  void end_session(const std::string& id) {
    httplib::Client client(url.origin);
    client.set_connection_timeout(std::min(options.connect_timeout, milliseconds(2000)));
    client.set_read_timeout(std::chrono::seconds(2));
    client.set_keep_alive(false);
    if (!url.user.empty()) client.set_basic_auth(url.user, url.password);
    bool with_session = false;
    httplib::Headers h = headers(with_session);
    if (!with_session) h.emplace("Mcp-Session-Id", id);
    // A 405 (the server does not let clients end sessions) or any failure: nothing to do.
    static_cast<void>(client.Delete(url.path, h));
  }

  void close() {
    const auto me = std::this_thread::get_id();
    std::unique_lock lock(mutex);
    const auto ours = [&] {
      return std::any_of(workers.begin(), workers.end(),
                         [&](const auto& w) { return w->thread.get_id() == me; });
    };
    if (closing) {
      // Another close() is under way (or done): wait for it, unless it waits for us.
      if (!ours()) changed.wait(lock, [&] { return closed; });
      return;
    }
    closing = true;
    stopping = true;
    changed.notify_all();
    const std::string session = gone ? "" : session_id;
    // Stop every request in flight until each thread but this one has ended
    // (a client stopped before it connected connects anyway: stop it again).
    const auto others_done = [&] {
      return std::all_of(workers.begin(), workers.end(),
                         [&](const auto& w) { return w->done || w->thread.get_id() == me; });
    };
    while (!others_done()) {
      std::vector<std::shared_ptr<httplib::Client>> clients;
      for (const auto& w : workers) {
        if (w->client && w->thread.get_id() != me) clients.push_back(w->client);
      }
      lock.unlock();
      for (const auto& c : clients) c->stop();
      lock.lock();
      changed.wait_for(lock, milliseconds(20), others_done);
    }
    auto ended = std::move(workers);
    workers.clear();
    lock.unlock();
    for (auto& w : ended) {
      if (w->thread.get_id() == me) {
        w->thread.detach();  // close() from a callback: this thread ends on its own
      } else {
        w->thread.join();
      }
    }
    if (!session.empty()) end_session(session);
    lock.lock();
    closed = true;
    changed.notify_all();
  }
};

Result<std::unique_ptr<HttpClientTransport>> HttpClientTransport::create(
    HttpClientOptions options) {
  Result<HttpUrl> url = parse_http_url(options.url);
  if (!url.ok()) return url.status();
  auto state = std::make_shared<State>();
  state->url = std::move(*url);
  state->options = std::move(options);
  return std::unique_ptr<HttpClientTransport>(new HttpClientTransport(std::move(state)));
}

HttpClientTransport::HttpClientTransport(std::shared_ptr<State> state) : state_(std::move(state)) {}

HttpClientTransport::~HttpClientTransport() { close(); }

void HttpClientTransport::start(OnMessage on_message, OnClosed on_closed,
                                OnDropped /*on_dropped*/) {
  std::lock_guard lock(state_->mutex);
  state_->on_message = std::move(on_message);
  state_->on_closed = std::move(on_closed);
  state_->started = true;
}

bool HttpClientTransport::send(const std::string& text) { return send_with_headers(text, {}); }

bool HttpClientTransport::send_with_headers(
    const std::string& text, const std::vector<std::pair<std::string, std::string>>& headers) {
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->started) return false;
  }
  Outgoing out = classify(text);
  out.extra_headers = headers;
  const bool initialized = out.method == "notifications/initialized" && !out.request;
  if (initialized) {
    std::lock_guard lock(state_->mutex);
    state_->stream_opening = !state_->listening;
  }
  const bool one_way = !out.request;
  const json modern_id = out.modern ? out.id : json();
  const bool sent = state_->spawn(
      [state = state_, text, out = std::move(out)](const std::shared_ptr<State::Worker>& worker) {
        state->post(worker, text, out);
      },
      one_way, modern_id);
  if (!sent && initialized) state_->stream_open();
  return sent;
}

bool HttpClientTransport::end_request_stream(std::int64_t id) {
  return state_->end_stream(json(id));
}

void HttpClientTransport::close() { state_->close(); }

void HttpClientTransport::set_protocol_version(const std::string& version) {
  std::lock_guard lock(state_->mutex);
  state_->protocol_version = version;
}

std::string HttpClientTransport::describe() const { return state_->url.shown; }

std::string HttpClientTransport::session_id() const {
  std::lock_guard lock(state_->mutex);
  return state_->session_id;
}

}  // namespace toolmux
