#include "src/protocol/provider_methods.h"

#include <optional>

#include "catalog/provider_router.h"
#include "src/base/elastic_threads.h"
#include "src/protocol/tool_list_cursor.h"
#include "src/session/call_context.h"
#include "src/session/input_exchange.h"

namespace toolmux {

using jsonrpc::Message;
using nlohmann::json;

struct ProviderMethods::Request {
  std::shared_ptr<const Catalog> catalog;
  ProviderRouter* router = nullptr;  // null: the catalog has no providers
  std::shared_ptr<Session> session;
  SessionCallContext& context;
};

namespace {

void respond_error(Session& session, const json& id, int code, std::string_view message,
                   json data = nullptr) {
  session.send_related(jsonrpc::make_error(id, code, message, std::move(data)), id);
}

// The params' string member `key`, or nullopt.
std::optional<std::string> string_param(const json& params, const char* key) {
  if (!params.is_object() || !params.contains(key) || !params[key].is_string()) return std::nullopt;
  return params[key].get<std::string>();
}

// The page offset a list request's cursor names: 0 without one, nullopt for
// a cursor this server did not mint.
std::optional<std::size_t> cursor_offset(const json& params) {
  if (!params.is_object() || !params.contains("cursor") || params["cursor"].is_null()) return 0;
  if (!params["cursor"].is_string()) return std::nullopt;
  return decode_tool_list_cursor(params["cursor"].get<std::string>());
}

// An object of strings (prompt arguments, completion context); nullopt with
// `bad` naming the first value that is not a string.
std::optional<std::map<std::string, std::string>> string_map(const json& value, std::string& bad) {
  std::map<std::string, std::string> out;
  if (value.is_null()) return out;
  if (!value.is_object()) {
    bad = "must be an object of strings";
    return std::nullopt;
  }
  for (const auto& [key, v] : value.items()) {
    if (!v.is_string()) {
      bad = "\"" + key + "\" must be a string";
      return std::nullopt;
    }
    out[key] = v.get<std::string>();
  }
  return out;
}

json page_of(std::vector<json> items, std::size_t offset, std::size_t page_size, const char* key) {
  const std::size_t page = page_size == 0 ? items.size() : page_size;
  const std::size_t end = std::min(items.size(), offset + page);
  json listed = json::array();
  for (std::size_t i = offset; i < end; ++i) listed.push_back(std::move(items[i]));
  json result{{key, std::move(listed)}};
  if (end < items.size()) result["nextCursor"] = encode_tool_list_cursor(end);
  return result;
}

template <typename T>
std::vector<json> to_json_all(const std::vector<T>& items) {
  std::vector<json> out;
  out.reserve(items.size());
  for (const T& item : items) out.push_back(item.to_json());
  return out;
}

}  // namespace

ProviderMethods::ProviderMethods(std::function<std::shared_ptr<const Catalog>()> catalog,
                                 std::size_t page_size, std::chrono::milliseconds timeout,
                                 Logger& logger, CallAdmission& admission,
                                 std::shared_ptr<const SealingKey> state_key)
    : catalog_(std::move(catalog)),
      page_size_(page_size),
      timeout_(timeout),
      logger_(logger),
      admission_(admission),
      state_key_(std::move(state_key)) {
  // The last subscriber of a URI left: the provider of the catalog served now
  // may stop watching it.
  subscriptions_ =
      std::make_shared<ResourceSubscriptions>([get = catalog_](const std::string& uri) {
        if (auto served = get(); served && served->providers) served->providers->unsubscribe(uri);
      });
}

std::vector<std::pair<std::string, ProviderMethods::Handler>> ProviderMethods::handlers() {
  auto bind =
      [this](void (ProviderMethods::*method)(const Message&, const std::shared_ptr<Session>&)) {
        return [this, method](const Message& m, const std::shared_ptr<Session>& s) {
          (this->*method)(m, s);
        };
      };
  return {{"resources/list", bind(&ProviderMethods::list_resources)},
          {"resources/templates/list", bind(&ProviderMethods::list_templates)},
          {"resources/read", bind(&ProviderMethods::read_resource)},
          {"resources/subscribe", bind(&ProviderMethods::subscribe)},
          {"resources/unsubscribe", bind(&ProviderMethods::unsubscribe)},
          {"prompts/list", bind(&ProviderMethods::list_prompts)},
          {"prompts/get", bind(&ProviderMethods::get_prompt)},
          {"completion/complete", bind(&ProviderMethods::complete)}};
}

void ProviderMethods::run(const Message& m, const std::shared_ptr<Session>& session, Work work) {
  auto control = session->begin_call(m.id);
  if (!control) {
    respond_error(*session, m.id, jsonrpc::kInvalidRequest,
                  "Invalid request: a request with id " + m.id.dump() + " is already in flight");
    return;
  }
  control->set_deadline(std::chrono::steady_clock::now() + timeout_);
  // A session restored after a restart did not initialize here: it joins
  // now. A 2026-07-28 request has no session to tell of changes.
  if (!session->request_meta()) subscriptions_->add_session(session);
  json progress_token = nullptr;
  if (m.params.is_object() && m.params.contains("_meta") && m.params["_meta"].is_object()) {
    progress_token = m.params["_meta"].value("progressToken", json(nullptr));
  }
  // A 2026-07-28 prompts/get or resources/read may ask its client through its
  // answer (MRTR), as a tools/call may.
  std::shared_ptr<InputExchange> exchange;
  if (session->request_meta() && (m.method == "prompts/get" || m.method == "resources/read")) {
    const bool prompt = m.method == "prompts/get";
    RequestBinding binding{session->principal(), m.method,
                           string_param(m.params, prompt ? "name" : "uri").value_or(""),
                           prompt && m.params.is_object()
                               ? m.params.value("arguments", json(nullptr))
                               : json(nullptr)};
    auto opened = InputExchange::open(m.params, std::move(binding), state_key_);
    if (const auto* e = std::get_if<JsonRpcError>(&opened)) {
      respond_error(*session, m.id, e->code, e->message, e->data);
      session->end_call(m.id);
      return;
    }
    exchange = std::get<std::shared_ptr<InputExchange>>(std::move(opened));
  }
  auto context = std::make_shared<SessionCallContext>(session, control, m.id, progress_token,
                                                      "toolmux/" + m.method, std::move(exchange));
  // Answers a request that ends without running, unless it was cancelled.
  auto unrun = [this, session, context, control, id = m.id, method = m.method](
                   int code, const std::string& outcome, const std::string& why) {
    context->finish();
    if (control->cancelled()) {
      session->request_finished(id);  // a cancelled request gets no response
    } else {
      logger_.write(LogLevel::warning, "call_not_run",
                    {{"session", session->label()},
                     {"method", method},
                     {"outcome", outcome},
                     {"reason", why}});
      respond_error(*session, id, code, why);
    }
    session->end_call(id);
  };

  CallAdmission::Call admitted;
  admitted.session = session->admission_key();
  admitted.control = control;
  admitted.start = [this, session, control, context, unrun, id = m.id, method = m.method,
                    work = std::move(work)](std::shared_ptr<const CallPlace> place) mutable {
    const bool posted = call_threads().post([this, session, control, context, id, method,
                                             work = std::move(work), place = std::move(place)]() {
      std::optional<json> result;
      std::optional<ProviderError> error;
      try {
        auto served = catalog_();
        Request request{served, served ? served->providers.get() : nullptr, session, *context};
        Outcome<json> out = work(request);
        if (out.ok()) {
          result = std::move(out.value());
        } else {
          error = out.error();
        }
      } catch (const std::exception& e) {
        // A provider's bug, not the client's: say so without details that could leak.
        logger_.write(LogLevel::error, "internal_error", {{"method", method}, {"what", e.what()}});
        error = ProviderError{jsonrpc::kInternalError, "Internal error", nullptr};
      }
      context->finish();
      if (control->cancelled()) {
        session->request_finished(id);  // a cancelled request gets no response
      } else if (const InputExchange* asked = context->input_exchange()) {
        auto answer = asked->input_required_result();
        if (const auto* e = std::get_if<JsonRpcError>(&answer)) {
          respond_error(*session, id, e->code, e->message, e->data);
        } else {
          session->send_related(jsonrpc::make_result(id, std::get<json>(std::move(answer))), id);
        }
      } else if (control->aborted()) {
        respond_error(*session, id, jsonrpc::kInternalError,
                      method + " was stopped before it finished: toolmux is exiting");
      } else if (control->expired()) {
        respond_error(*session, id, jsonrpc::kInternalError,
                      method + " timed out after " + std::to_string(timeout_.count()) + " ms");
      } else if (error) {
        respond_error(*session, id, error->code, error->message, error->data);
      } else {
        session->send_related(jsonrpc::make_result(id, std::move(*result)), id);
      }
      session->end_call(id);
    });
    if (!posted) {
      unrun(jsonrpc::kServerBusy, "refused",
            "toolmux is busy: no thread could be started for " + method +
                " (the system refused one); try again later");
    }
  };
  admitted.drop = [this, control, unrun, method = m.method](const std::string& busy) {
    const bool expired = !control->aborted() && control->expired();
    unrun(jsonrpc::kInternalError, expired ? "timed_out" : "stopped",
          expired ? method + " timed out after " + std::to_string(timeout_.count()) +
                        " ms waiting for a place to run; toolmux was busy: " + busy
                  : method + " did not run: toolmux is exiting");
  };
  const CallAdmission::Decision decision = admission_.submit(std::move(admitted));
  if (decision.verdict == CallAdmission::Verdict::refused) {
    unrun(jsonrpc::kServerBusy, "refused", decision.refusal);
  }
}

namespace {

// Logs why a listing left something out; the client gets the rest.
template <typename T>
void log_problems(Logger& logger, const Session& session, const std::string& method,
                  const Listing<T>& listing) {
  for (const std::string& p : listing.problems) {
    logger.write(LogLevel::warning, "provider_problem",
                 {{"session", session.label()}, {"method", method}, {"problem", p}});
  }
}

std::optional<std::string> checked_uri(const Message& m, Session& session) {
  auto uri = string_param(m.params, "uri");
  if (!uri || uri->empty()) {
    respond_error(session, m.id, jsonrpc::kInvalidParams,
                  "Invalid params: " + m.method + " needs \"uri\" (a non-empty string)");
    return std::nullopt;
  }
  return uri;
}

bool checked_cursor(const Message& m, Session& session, std::size_t& offset) {
  auto decoded = cursor_offset(m.params);
  if (!decoded) {
    respond_error(session, m.id, jsonrpc::kInvalidParams, "Invalid params: unknown cursor");
    return false;
  }
  offset = *decoded;
  return true;
}

}  // namespace

template <typename T>
void ProviderMethods::list(const Message& m, const std::shared_ptr<Session>& session,
                           const char* key, Listing<T> (ProviderRouter::*lister)(CallContext&)) {
  std::size_t offset = 0;
  if (!checked_cursor(m, *session, offset)) return;
  run(m, session, [this, offset, key, lister, method = m.method](Request& r) -> Outcome<json> {
    if (!r.router) return page_of({}, 0, page_size_, key);
    Listing<T> listing = (r.router->*lister)(r.context);
    log_problems(logger_, *r.session, method, listing);
    if (offset > listing.items.size()) return ProviderError::invalid_params("unknown cursor");
    return page_of(to_json_all(listing.items), offset, page_size_, key);
  });
}

void ProviderMethods::list_resources(const Message& m, const std::shared_ptr<Session>& session) {
  list(m, session, "resources", &ProviderRouter::list_resources);
}

void ProviderMethods::list_templates(const Message& m, const std::shared_ptr<Session>& session) {
  list(m, session, "resourceTemplates", &ProviderRouter::list_resource_templates);
}

void ProviderMethods::read_resource(const Message& m, const std::shared_ptr<Session>& session) {
  auto uri = checked_uri(m, *session);
  if (!uri) return;
  run(m, session, [uri = *uri](Request& r) -> Outcome<json> {
    if (!r.router) return ProviderError::resource_not_found(uri);
    auto read = r.router->read_resource(uri, r.context);
    if (!read.ok()) return read.error();
    json contents = json::array();
    for (const ResourceContents& c : read.value()) contents.push_back(c.to_json());
    return json{{"contents", std::move(contents)}};
  });
}

void ProviderMethods::subscribe(const Message& m, const std::shared_ptr<Session>& session) {
  auto uri = checked_uri(m, *session);
  if (!uri) return;
  run(m, session, [this, uri = *uri](Request& r) -> Outcome<json> {
    if (!r.router) return ProviderError::resource_not_found(uri);
    ProviderStatus subscribed = r.router->subscribe(uri, r.context);
    if (!subscribed.ok()) return subscribed.error();
    subscriptions_->subscribe(r.session, uri);
    return json::object();
  });
}

void ProviderMethods::unsubscribe(const Message& m, const std::shared_ptr<Session>& session) {
  auto uri = checked_uri(m, *session);
  if (!uri) return;
  run(m, session, [this, uri = *uri](Request& r) -> Outcome<json> {
    subscriptions_->unsubscribe(r.session, uri);
    return json::object();
  });
}

void ProviderMethods::list_prompts(const Message& m, const std::shared_ptr<Session>& session) {
  list(m, session, "prompts", &ProviderRouter::list_prompts);
}

void ProviderMethods::get_prompt(const Message& m, const std::shared_ptr<Session>& session) {
  auto name = string_param(m.params, "name");
  if (!name) {
    respond_error(*session, m.id, jsonrpc::kInvalidParams,
                  "Invalid params: prompts/get needs \"name\" (a string)");
    return;
  }
  std::string bad;
  auto arguments = string_map(m.params.value("arguments", json(nullptr)), bad);
  if (!arguments) {
    respond_error(*session, m.id, jsonrpc::kInvalidParams,
                  "Invalid params: prompts/get \"arguments\": " + bad);
    return;
  }
  run(m, session, [name = *name, arguments = std::move(*arguments)](Request& r) -> Outcome<json> {
    if (!r.router) return ProviderError::invalid_params("unknown prompt " + json(name).dump());
    auto got = r.router->get_prompt(name, arguments, r.context);
    if (!got.ok()) return got.error();
    return got.value().to_json();
  });
}

void ProviderMethods::complete(const Message& m, const std::shared_ptr<Session>& session) {
  const json& params = m.params;
  auto invalid = [&](const std::string& what) {
    respond_error(*session, m.id, jsonrpc::kInvalidParams, "Invalid params: " + what);
  };
  if (!params.is_object() || !params.contains("ref") || !params["ref"].is_object()) {
    return invalid("completion/complete needs \"ref\" (an object)");
  }
  const json& ref_json = params["ref"];
  CompletionRef ref;
  const std::string type = ref_json.value("type", json("")).is_string()
                               ? ref_json.value("type", std::string())
                               : std::string();
  const char* key = "name";
  if (type == "ref/prompt") {
    ref.kind = CompletionRef::Kind::prompt;
  } else if (type == "ref/resource") {
    ref.kind = CompletionRef::Kind::resource;
    key = "uri";
  } else {
    return invalid("\"ref.type\" must be \"ref/prompt\" or \"ref/resource\"");
  }
  auto ref_name = string_param(ref_json, key);
  if (!ref_name) return invalid("\"ref." + std::string(key) + "\" must be a string");
  ref.name = *ref_name;
  const json argument = params.value("argument", json(nullptr));
  auto argument_name = string_param(argument, "name");
  auto argument_value = string_param(argument, "value");
  if (!argument_name || !argument_value) {
    return invalid("completion/complete needs \"argument\" with \"name\" and \"value\" (strings)");
  }
  CompletionRequest request;
  request.argument = *argument_name;
  request.value = *argument_value;
  std::string bad;
  const json context = params.value("context", json(nullptr));
  auto context_arguments = string_map(
      context.is_object() ? context.value("arguments", json(nullptr)) : json(nullptr), bad);
  if (!context_arguments) return invalid("\"context.arguments\": " + bad);
  request.context_arguments = std::move(*context_arguments);
  run(m, session,
      [ref = std::move(ref), request = std::move(request)](Request& r) -> Outcome<json> {
        if (!r.router)
          return ProviderError::invalid_params(
              "nothing to complete: no prompts or resource templates");
        auto done = r.router->complete(ref, request, r.context);
        if (!done.ok()) return done.error();
        return json{{"completion", done.value().to_json()}};
      });
}

}  // namespace toolmux
