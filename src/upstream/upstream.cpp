#include "src/upstream/upstream.h"

#include <sstream>
#include <utility>

#include "src/base/file_io.h"
#include "src/base/log_rate_limit.h"
#include "transports/http_client_transport.h"
#include "transports/oauth_client.h"
#include "transports/stdio_child_transport.h"

namespace toolmux {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// An upstream that served this long is healthy again: the next crash restarts
// it after the initial delay.
constexpr milliseconds kHealthyAfter{30000};
constexpr double kRetryTokensMax = 10;
constexpr double kRetryTokensPerAnswer = 0.1;
// A modern upstream's subscription that ended is opened again after this,
// doubling up to the maximum; one that lasted kListenHealthyAfter starts over.
constexpr milliseconds kListenRetryInitial{1000};
constexpr milliseconds kListenRetryMax{60000};
constexpr milliseconds kListenHealthyAfter{60000};

// A stdio upstream's stderr, line by line, into the log at a bounded rate: a
// server that floods its stderr costs a counter, not a log line a line. The
// dropped lines are reported at most every kStderrSummaryEvery while the flood
// lasts, and the rest when the stream ends (the sink that owns this object
// goes with the thread that reads the stream).
class StderrLog {
 public:
  static constexpr double kLinesPerSecond = 50;
  static constexpr double kBurst = 200;
  static constexpr std::chrono::seconds kSummaryEvery{10};

  StderrLog(Logger& logger, std::string upstream)
      : logger_(logger), upstream_(std::move(upstream)) {}
  StderrLog(const StderrLog&) = delete;
  StderrLog& operator=(const StderrLog&) = delete;
  ~StderrLog() { report(limit_.flush()); }

  void line(std::string_view text) {
    const LogRateLimit::Verdict verdict = limit_.admit();
    report(verdict.report);
    if (verdict.pass) {
      logger_.write(LogLevel::info, "upstream_stderr", {{"upstream", upstream_}, {"line", text}});
    }
  }

 private:
  void report(std::uint64_t dropped) {
    if (dropped == 0) return;
    logger_.write(LogLevel::warning, "upstream_stderr_dropped",
                  {{"upstream", upstream_},
                   {"dropped", dropped},
                   {"message", limit_.drop_summary(
                                   dropped, "stderr lines from upstream \"" + upstream_ + "\"")}});
  }

  Logger& logger_;
  const std::string upstream_;
  LogRateLimit limit_{kLinesPerSecond, kBurst, kSummaryEvery};
};

std::string seconds_text(Clock::duration d) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << std::max(0.0, std::chrono::duration<double>(d).count()) << " s";
  return out.str();
}

// The tool list kept from the last run: at most as large as one message from
// an upstream may be (stdio_child.h), and only from a regular file.
constexpr std::size_t kMaxToolsCacheBytes = std::size_t{64} << 20;

std::optional<std::vector<json>> read_cache(const std::filesystem::path& file) {
  if (file.empty()) return std::nullopt;
  Result<std::string> text = read_regular_file(file, kMaxToolsCacheBytes);
  if (!text.ok()) return std::nullopt;
  json cached = json::parse(*text, nullptr, false);
  if (!cached.is_object() || !cached.contains("tools") || !cached["tools"].is_array()) {
    return std::nullopt;
  }
  return cached["tools"].get<std::vector<json>>();
}

// Written beside, then renamed over: a reader sees the old list or the new.
void write_cache(const std::filesystem::path& file, const std::vector<json>& tools) {
  if (file.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  (void)write_file_atomically(file, json{{"tools", tools}}.dump());
}

}  // namespace

std::shared_ptr<Upstream> Upstream::create(UpstreamSpec spec, Logger& logger,
                                           std::filesystem::path tools_cache, Hooks hooks) {
  return std::shared_ptr<Upstream>(
      new Upstream(std::move(spec), logger, std::move(tools_cache), std::move(hooks)));
}

Upstream::Upstream(UpstreamSpec spec, Logger& logger, std::filesystem::path tools_cache,
                   Hooks hooks)
    : spec_(std::move(spec)),
      logger_(logger),
      tools_cache_(std::move(tools_cache)),
      hooks_(std::move(hooks)) {
  delay_ = spec_.lifecycle.restart_initial;
  // Only a lazy upstream's tools are taken from the last run: an eager one
  // that cannot start offers nothing rather than tools that cannot answer.
  if (!spec_.lifecycle.lazy) return;
  std::optional<std::vector<json>> cached;
  if (hooks_.read_tools) cached = hooks_.read_tools(spec_.name);
  if (!cached) cached = read_cache(tools_cache_);
  if (cached) {
    tools_ = std::move(*cached);
    tools_known_ = true;
  }
}

Upstream::~Upstream() { stop(); }

void Upstream::start() {
  std::lock_guard lock(mutex_);
  if (supervisor_.joinable()) return;
  // A lazy upstream whose tools are not known from an earlier run is started
  // once now: nothing could call a tool of it otherwise.
  wanted_ = !spec_.lifecycle.lazy || !tools_known_;
  supervisor_ = std::thread([this] { supervise(); });
}

bool Upstream::wait_started(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [this] { return !wanted_ || first_attempt_done_ || stopping_; });
  return client_ != nullptr;
}

void Upstream::request_relist() {
  {
    std::lock_guard lock(mutex_);
    relist_wanted_ = true;
  }
  changed_.notify_all();
}

void Upstream::stop() {
  std::shared_ptr<McpClient> client;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    client = std::move(client_);
  }
  changed_.notify_all();
  if (supervisor_.joinable() && supervisor_.get_id() != std::this_thread::get_id()) {
    supervisor_.join();
  }
  client.reset();  // closes it, unless a call still holds it (then that call's end does)
}

UpstreamSpec Upstream::spec() const {
  std::lock_guard lock(mutex_);
  return spec_;
}

void Upstream::set_spec(UpstreamSpec spec) {
  std::lock_guard lock(mutex_);
  spec_ = std::move(spec);
}

std::vector<json> Upstream::tools() const {
  std::lock_guard lock(mutex_);
  return tools_;
}

json Upstream::capabilities() const {
  std::lock_guard lock(mutex_);
  return capabilities_;
}

SourceInfo Upstream::source_info() const {
  std::lock_guard lock(mutex_);
  SourceInfo info;
  info.name = spec_.name;
  auto text = [this](const char* key) {
    const auto it = server_info_.find(key);
    return it != server_info_.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  info.title = text("title");
  // The operator's words first: the first sentence of the description is
  // what tool_search shows of the source.
  for (const std::string& part : {spec_.description, text("description"), instructions_}) {
    if (part.empty()) continue;
    if (!info.description.empty()) info.description += "\n\n";
    info.description += part;
  }
  return info;
}

std::string Upstream::state() const {
  std::lock_guard lock(mutex_);
  return state_locked();
}

std::string Upstream::state_locked() const {
  const auto now = Clock::now();
  if (stopping_) return "stopped";
  if (breaker_open_) {
    return "circuit open after " + std::to_string(consecutive_failures_) +
           " failed calls in a row; next probe in " + seconds_text(breaker_until_ - now);
  }
  if (client_)
    return era_ == ProtocolEra::modern ? "serving (protocol " + protocol_ + ")" : "serving";
  if (!wanted_) return "not started (starts on first use)";
  if (down_reason_.empty()) return "starting";
  return "restarting: " + down_reason_ + "; next attempt in " + seconds_text(next_attempt_ - now);
}

Upstream::Health Upstream::health() const {
  // The steady clock's instants as wall-clock ones, for a reader elsewhere.
  const auto now = Clock::now();
  const auto wall_now = std::chrono::system_clock::now();
  const auto wall = [&](Clock::time_point at) {
    return wall_now + std::chrono::duration_cast<std::chrono::system_clock::duration>(at - now);
  };
  Health out;
  std::lock_guard lock(mutex_);
  out.state = state_locked();
  if (stopping_) {
    out.phase = "stopped";
  } else if (breaker_open_) {
    out.phase = "breaker_open";
    out.breaker_until = wall(breaker_until_);
  } else if (client_) {
    out.phase = "serving";
  } else if (!wanted_) {
    out.phase = "not_started";
  } else if (down_reason_.empty()) {
    out.phase = "starting";
  } else {
    // Down because no token can be had without a person: says so, and tries
    // again (a login made meanwhile counts at the next attempt).
    out.phase = down_reason_.find(login_needed_text(spec_.name)) != std::string::npos
                    ? "needs_login"
                    : "restarting";
    out.next_attempt = wall(next_attempt_);
  }
  out.last_error = last_error_;
  if (!last_error_.empty()) out.last_error_at = last_error_at_;
  out.restarts = attempts_done_ > 0 ? attempts_done_ - 1 : 0;
  out.tools = tools_.size();
  out.protocol = protocol_;
  return out;
}

ProtocolEra Upstream::era() const {
  std::lock_guard lock(mutex_);
  return era_;
}

std::string Upstream::protocol() const {
  std::lock_guard lock(mutex_);
  return protocol_;
}

Status Upstream::subscribe_resource(const std::string& uri) {
  {
    std::lock_guard lock(mutex_);
    const std::string who = "upstream \"" + spec_.name + "\"";
    if (listen_refused_) {
      return Status::unavailable(who + " refused subscriptions/listen: no subscription to " + uri);
    }
    if (resource_subscriptions_.count(uri) > 0) return Status::ok_status();
    if (resource_subscriptions_.size() >= kMaxResourceSubscriptions) {
      return Status::resource_exhausted("toolmux subscribes to at most " +
                                        std::to_string(kMaxResourceSubscriptions) +
                                        " resources of " + who + "; " + uri + " is one too many");
    }
    resource_subscriptions_.insert(uri);
    listen_wanted_ = true;
    listen_at_ = Clock::now();
  }
  changed_.notify_all();
  return Status::ok_status();
}

void Upstream::unsubscribe_resource(const std::string& uri) {
  {
    std::lock_guard lock(mutex_);
    if (resource_subscriptions_.erase(uri) == 0) return;
    listen_wanted_ = true;
    listen_at_ = Clock::now();
  }
  changed_.notify_all();
}

json Upstream::listen_filter_locked() const {
  json filter = json::object();
  auto declares = [&](const char* capability, const char* flag) {
    const json declared = capabilities_.value(capability, json());
    return declared.is_object() && declared.value(flag, json(false)) == json(true);
  };
  if (declares("tools", "listChanged")) filter["toolsListChanged"] = true;
  if (declares("prompts", "listChanged")) filter["promptsListChanged"] = true;
  if (declares("resources", "listChanged")) filter["resourcesListChanged"] = true;
  if (declares("resources", "subscribe") && !resource_subscriptions_.empty()) {
    filter["resourceSubscriptions"] = resource_subscriptions_;
  }
  return filter;
}

void Upstream::listen_ended(const McpClient* client, const std::string& why, bool refused) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || client_.get() != client) return;  // an earlier start's
    if (refused) {
      listen_refused_ = true;
      logger_.write(LogLevel::warning, "upstream_listen_refused",
                    {{"upstream", spec_.name}, {"reason", why}});
      return;
    }
    const auto now = Clock::now();
    if (now - listening_since_ >= kListenHealthyAfter) listen_failures_ = 0;
    milliseconds delay = kListenRetryInitial;
    for (int i = 0; i < listen_failures_ && delay < kListenRetryMax; ++i) delay *= 2;
    delay = std::min(delay, kListenRetryMax);
    ++listen_failures_;
    listen_wanted_ = true;
    listen_at_ = now + delay;
    // What changed meanwhile was not told: the tools are listed again.
    relist_after_listen_ = true;
    logger_.write(
        LogLevel::warning, "upstream_listen_ended",
        {{"upstream", spec_.name}, {"reason", why}, {"listen_again_in_ms", delay.count()}});
  }
  changed_.notify_all();
}

std::string login_needed_text(const std::string& upstream) {
  return "upstream \"" + upstream + "\" needs a person to log in: run `toolmux login " + upstream +
         "` with this server's --catalog and store options (docs/upstreams.md#login)";
}

Result<Upstream::Connected> Upstream::connect() {
  const UpstreamSpec spec = this->spec();
  std::unique_ptr<ClientTransport> transport;
  if (!spec.url.empty()) {
    HttpClientOptions options;
    options.url = spec.url;
    options.headers = spec.headers;
    if (spec.oauth) {
      OAuthClient::Options oauth;
      oauth.server_url = spec.url;
      oauth.grant = OAuthClient::Grant::client_credentials;
      if (spec.oauth->grant == UpstreamOAuth::Grant::authorization_code) {
        // The login `toolmux login` kept: used, refreshed and kept again;
        // without one (or once it cannot be refreshed) the upstream says so.
        oauth.grant = OAuthClient::Grant::authorization_code;
        oauth.login_needed = login_needed_text(spec.name);
        if (hooks_.read_login) {
          oauth.load_login = [this, upstream = spec.name] { return hooks_.read_login(upstream); };
        }
        if (hooks_.write_login) {
          oauth.on_login = [this, upstream = spec.name](const std::string& login) {
            hooks_.write_login(upstream, login);
          };
        }
      }
      oauth.client_id = spec.oauth->client_id;
      oauth.client_secret = spec.oauth->client_secret;
      oauth.private_key_pem = spec.oauth->private_key_pem;
      oauth.signing_algorithm = spec.oauth->signing_algorithm;
      oauth.token_endpoint_auth_method = spec.oauth->token_endpoint_auth_method;
      oauth.issuer = spec.oauth->issuer;
      oauth.scope = spec.oauth->scope;
      auto authorizer = OAuthClient::create(std::move(oauth));
      if (!authorizer.ok()) return authorizer.status();
      options.authorizer = std::move(authorizer).value();
    }
    options.on_warning = [this](const std::string& warning) {
      logger_.write(LogLevel::warning, "upstream_http_warning",
                    {{"upstream", name()}, {"warning", warning}});
    };
    Result<std::unique_ptr<HttpClientTransport>> created =
        HttpClientTransport::create(std::move(options));
    if (!created.ok()) return created.status();
    transport = std::move(created).value();
  } else {
    ChildCommand command;
    command.argv = spec.argv;
    command.cwd = spec.cwd;
    command.env = spec.env;
    Result<std::unique_ptr<StdioChildTransport>> started =
        StdioChildTransport::start(command, [log = std::make_shared<StderrLog>(logger_, spec.name)](
                                                std::string_view line) { log->line(line); });
    if (!started.ok()) {
      return Status::unavailable("cannot start: " + started.message());
    }
    transport = std::move(started).value();
  }
  McpClient::Events events;
  std::weak_ptr<Upstream> weak = weak_from_this();
  events.on_notification = [weak](const std::string& method, const json& params) {
    auto self = weak.lock();
    if (!self) return;
    if (method == "notifications/tools/list_changed") {
      self->request_relist();
    } else if (self->hooks_.on_notification) {
      self->hooks_.on_notification(self->name(), method, params);
    }
  };
  events.on_closed = [weak](const std::string& /*reason*/) {
    auto self = weak.lock();
    if (!self) return;
    {
      std::lock_guard lock(self->mutex_);
      self->client_closed_ = true;
    }
    self->changed_.notify_all();
  };
  auto client = McpClient::create(spec.name, std::move(transport), logger_, std::move(events));
  bool probe = true;
  {
    std::lock_guard lock(mutex_);
    probe = !legacy_known_;
  }
  if (Status ready =
          client->connect(spec.lifecycle.start_timeout, spec.lifecycle.probe_timeout, probe);
      !ready.ok()) {
    std::lock_guard lock(mutex_);
    legacy_known_ = false;  // the next start finds the era again
    return ready;
  }
  Result<std::vector<json>> listed = client->list_tools(spec.lifecycle.start_timeout);
  if (!listed.ok()) return listed.status();
  return Connected{std::move(client), std::move(listed).value()};
}

void Upstream::set_tools(const std::vector<json>& tools, bool listed) {
  bool changed = false;
  {
    std::lock_guard lock(mutex_);
    changed = !tools_known_ || tools != tools_;
    tools_ = tools;
    tools_known_ = true;
  }
  if (!changed) return;
  write_cache(tools_cache_, tools);
  if (listed && hooks_.write_tools) hooks_.write_tools(name(), tools);
  logger_.write(LogLevel::info, "upstream_tools_changed",
                {{"upstream", name()}, {"tools", tools.size()}});
  if (hooks_.on_tools_changed) hooks_.on_tools_changed(name());
}

void Upstream::relist(const std::shared_ptr<McpClient>& client) {
  const Result<std::vector<json>> listed = client->list_tools(spec().lifecycle.start_timeout);
  if (!listed.ok()) {
    logger_.write(LogLevel::warning, "upstream_relist_failed",
                  {{"upstream", name()}, {"reason", listed.message()}});
    return;
  }
  set_tools(*listed);
}

void Upstream::supervise() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (client_ && client_closed_) {
      // It crashed or dropped: calls fail fast until it is back.
      // It stays in client_ (lost) until the reason is known, so that a
      // call arriving meanwhile waits for the reason rather than missing it.
      auto gone = client_;
      const auto served = Clock::now() - serving_since_;
      lock.unlock();
      const std::string reason = gone->closed_reason();
      lock.lock();
      client_.reset();
      client_closed_ = false;
      if (served >= kHealthyAfter) delay_ = spec_.lifecycle.restart_initial;
      down_reason_ = reason;
      last_error_ = reason;
      last_error_at_ = std::chrono::system_clock::now();
      next_attempt_ = Clock::now() + delay_;
      logger_.write(LogLevel::warning, "upstream_down",
                    {{"upstream", name()}, {"reason", reason}, {"restart_in_ms", delay_.count()}});
      delay_ = std::min(delay_ * 2, spec_.lifecycle.restart_max);
      changed_.notify_all();
      lock.unlock();
      gone.reset();  // closes its transport, joining its threads: never under mutex_
      lock.lock();
      continue;
    }
    if (client_ && !client_closed_ && listen_wanted_ && Clock::now() >= listen_at_) {
      listen_wanted_ = false;
      const json filter = listen_filter_locked();
      const bool relist_now = relist_after_listen_;
      relist_after_listen_ = false;
      listening_since_ = Clock::now();
      auto client = client_;
      std::weak_ptr<Upstream> weak = weak_from_this();
      lock.unlock();
      if (filter.empty()) {
        client->end_listen();
      } else {
        client->listen(filter, [weak, raw = client.get()](const std::string& why, bool refused) {
          if (auto self = weak.lock()) self->listen_ended(raw, why, refused);
        });
      }
      if (relist_now) relist(client);
      lock.lock();
      continue;
    }
    if (client_ && relist_wanted_) {
      relist_wanted_ = false;
      auto client = client_;
      lock.unlock();
      relist(client);
      lock.lock();
      continue;
    }
    if (!client_ && !wanted_ && relist_wanted_) {
      // Lazy and not started here: another instance's copy changed, and what
      // it listed is in the shared store. Nothing to start for it.
      relist_wanted_ = false;
      if (!hooks_.read_tools) continue;
      lock.unlock();
      const std::optional<std::vector<json>> stored = hooks_.read_tools(name());
      if (stored) set_tools(*stored, /*listed=*/false);
      lock.lock();
      continue;
    }
    if (!client_ && wanted_ && Clock::now() >= next_attempt_) {
      lock.unlock();
      Result<Connected> connected = connect();
      std::shared_ptr<McpClient> client;
      if (connected.ok()) {
        client = std::move(connected->client);
        const bool modern = client->era() == ProtocolEra::modern;
        json started = {{"upstream", name()},
                        {"server", client->server_info()},
                        {"tools", connected->tools.size()},
                        {"era", modern ? "modern" : "legacy"},
                        {"protocol", client->protocol_version()}};
        if (!modern) started["why_legacy"] = client->legacy_reason();
        logger_.write(LogLevel::info, "upstream_started", started);
        set_tools(connected->tools);
      } else {
        logger_.write(LogLevel::error, "upstream_failed",
                      {{"upstream", name()}, {"reason", connected.message()}});
      }
      lock.lock();
      first_attempt_done_ = true;
      ++attempts_done_;
      if (client && !stopping_) {
        client_ = std::move(client);
        client_closed_ = client_->gone();
        capabilities_ = client_->server_capabilities();
        server_info_ = client_->server_info();
        instructions_ = client_->instructions();
        era_ = client_->era();
        protocol_ = client_->protocol_version();
        legacy_known_ = era_ == ProtocolEra::legacy;
        // A modern upstream tells its changes only on a subscription.
        listen_wanted_ = era_ == ProtocolEra::modern;
        listen_at_ = Clock::now();
        listen_failures_ = 0;
        listen_refused_ = false;
        relist_after_listen_ = false;
        serving_since_ = Clock::now();
        attempts_ = 0;
        down_reason_.clear();
      } else if (!stopping_) {
        ++attempts_;
        down_reason_ = connected.message();
        last_error_ = down_reason_;
        last_error_at_ = std::chrono::system_clock::now();
        next_attempt_ = Clock::now() + delay_;
        delay_ = std::min(delay_ * 2, spec_.lifecycle.restart_max);
      }
      changed_.notify_all();
      if (client) {
        // Started while toolmux stopped it: closing it joins its threads,
        // whose callbacks take mutex_. Never under it.
        lock.unlock();
        client.reset();
        lock.lock();
      }
      continue;
    }
    if (!client_ && wanted_) {
      changed_.wait_until(lock, next_attempt_);
    } else if (client_ && !client_closed_ && listen_wanted_) {
      changed_.wait_until(lock, listen_at_);
    } else {
      changed_.wait(lock);
    }
  }
  auto client = std::move(client_);
  lock.unlock();
  client.reset();
}

std::shared_ptr<McpClient> Upstream::admit(Clock::time_point deadline, bool guarded, bool& probe,
                                           McpClient::Outcome& refused) {
  std::unique_lock lock(mutex_);
  const auto now = Clock::now();
  const std::string who = "upstream \"" + spec_.name + "\"";
  auto refuse = [&](std::string why) {
    refused = {std::nullopt, McpClient::Failure::unavailable, std::move(why), nullptr};
    return nullptr;
  };
  if (stopping_) return refuse(who + " is stopping");
  if (guarded && breaker_open_) {
    if (now < breaker_until_) {
      return refuse(who + " is refusing calls: " + std::to_string(consecutive_failures_) +
                    " calls in a row failed (circuit breaker open); the next call in " +
                    seconds_text(breaker_until_ - now) + " is let through to try it");
    }
    if (probe_in_flight_) {
      return refuse(who +
                    " is refusing calls while one probe call finds out whether it "
                    "has recovered (circuit breaker)");
    }
  }
  if (!wanted_) {
    // A lazy upstream's first use starts it.
    wanted_ = true;
    next_attempt_ = now;
    logger_.write(LogLevel::info, "upstream_first_use", {{"upstream", spec_.name}});
    changed_.notify_all();
  }
  // (The client knows it has gone a moment before the supervisor hears it.)
  auto lost = [this] { return client_ && (client_closed_ || client_->gone()); };
  if (lost()) {
    // Lost a moment ago: the supervisor is about to say why and plan the
    // restart; the refusal below tells that.
    changed_.wait_until(lock, std::min(deadline, now + std::chrono::seconds(1)),
                        [&] { return stopping_ || !lost(); });
  }
  if (!client_ || client_closed_) {
    if (!first_attempt_done_) {
      // Starting for the first time: wait for it, within the call's deadline.
      changed_.wait_until(lock, deadline, [this] {
        return stopping_ || first_attempt_done_ || (client_ && !client_closed_);
      });
    }
    if (!client_ || client_closed_) {
      if (stopping_) return refuse(who + " is stopping");
      if (down_reason_.empty()) return refuse(who + " did not start in time");
      return refuse(who + " is unavailable: " + down_reason_ + "; toolmux restarts it (attempt " +
                    std::to_string(attempts_ + 1) + " in " +
                    seconds_text(next_attempt_ - Clock::now()) + ")");
    }
  }
  if (guarded && breaker_open_) {
    probe_in_flight_ = true;
    probe = true;
  }
  return client_;
}

void Upstream::record(const McpClient::Outcome& outcome, bool guarded, bool probe) {
  using F = McpClient::Failure;
  std::lock_guard lock(mutex_);
  if (probe) probe_in_flight_ = false;
  if (outcome.failure == F::cancelled || outcome.failure == F::unavailable) return;
  const bool failed = outcome.failure == F::gone || outcome.failure == F::timed_out ||
                      outcome.failure == F::invalid;
  if (!failed) retry_tokens_ = std::min(kRetryTokensMax, retry_tokens_ + kRetryTokensPerAnswer);
  if (!guarded) return;
  if (!failed) {
    if (breaker_open_) {
      logger_.write(LogLevel::info, "upstream_circuit_closed", {{"upstream", spec_.name}});
    }
    breaker_open_ = false;
    consecutive_failures_ = 0;
    return;
  }
  ++consecutive_failures_;
  if (probe || consecutive_failures_ >= spec_.lifecycle.breaker_failures) {
    if (!breaker_open_ || probe) {
      logger_.write(LogLevel::warning, "upstream_circuit_open",
                    {{"upstream", spec_.name},
                     {"failures", consecutive_failures_},
                     {"cooldown_ms", spec_.lifecycle.breaker_cooldown.count()},
                     {"last_error", outcome.error}});
    }
    breaker_open_ = true;
    breaker_until_ = Clock::now() + spec_.lifecycle.breaker_cooldown;
    last_error_ = outcome.error;
    last_error_at_ = std::chrono::system_clock::now();
  }
}

bool Upstream::take_retry_token() {
  std::lock_guard lock(mutex_);
  if (retry_tokens_ < 1) return false;
  retry_tokens_ -= 1;
  return true;
}

McpClient::Outcome Upstream::send(const std::function<McpClient::Outcome(McpClient&)>& run,
                                  Clock::time_point deadline, bool retry_when_lost, bool reads) {
  const UpstreamLifecycle lifecycle = spec().lifecycle;
  int retries = retry_when_lost ? lifecycle.read_only_retries : 0;
  const bool guarded = reads && lifecycle.breaker;
  while (true) {
    bool probe = false;
    McpClient::Outcome refused;
    auto client = admit(deadline, guarded, probe, refused);
    if (!client) return refused;
    McpClient::Outcome outcome = run(*client);
    record(outcome, guarded, probe);
    if (outcome.failure != McpClient::Failure::gone || retries <= 0 || Clock::now() >= deadline ||
        !take_retry_token()) {
      return outcome;
    }
    --retries;
    // Lost under the call: wait for the next restart attempt (within the
    // deadline); when it brings the upstream back, try again.
    logger_.write(LogLevel::info, "upstream_retry",
                  {{"upstream", name()}, {"reason", outcome.error}});
    std::unique_lock lock(mutex_);
    // The supervisor may not have seen the loss yet: the attempt to wait for
    // is the first one to end after the old client is gone.
    changed_.wait_until(lock, deadline, [&] { return stopping_ || client_ != client; });
    const std::uint64_t seen = attempts_done_;
    changed_.wait_until(lock, deadline, [&] {
      return stopping_ || (client_ && !client_closed_) || attempts_done_ > seen;
    });
    if (!client_ || client_closed_ || client_ == client) return outcome;
  }
}

McpClient::Outcome Upstream::call_tool(const std::string& tool, const json& arguments,
                                       CallContext& context, SideEffect effect) {
  const bool reads = effect == SideEffect::read_only;
  return send([&](McpClient& client) { return client.call_tool(tool, arguments, context); },
              context.deadline(), reads, reads);
}

McpClient::Outcome Upstream::request(const std::string& method, json params,
                                     Clock::time_point deadline, CallContext* context) {
  return send([&](McpClient& client) { return client.request(method, params, deadline, context); },
              deadline, false, true);
}

}  // namespace toolmux
