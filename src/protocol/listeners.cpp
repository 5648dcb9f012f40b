#include "src/protocol/listeners.h"

#include <utility>
#include <vector>

#include "src/base/jsonrpc.h"
#include "src/protocol/modern.h"

namespace toolmux {

using nlohmann::json;

json ListenFilter::to_json() const {
  json agreed = json::object();
  if (tools) agreed["toolsListChanged"] = true;
  if (prompts) agreed["promptsListChanged"] = true;
  if (resources) agreed["resourcesListChanged"] = true;
  if (!uris.empty()) agreed["resourceSubscriptions"] = uris;
  return agreed;
}

void ListenSink::send(const json& message, const json& /*related_request*/) {
  const std::string method = message.value("method", "");
  if (!method.empty()) {
    const bool wanted =
        (method == "notifications/tools/list_changed" && filter_.tools) ||
        (method == "notifications/prompts/list_changed" && filter_.prompts) ||
        (method == "notifications/resources/list_changed" && filter_.resources) ||
        (method == "notifications/resources/updated" && message.contains("params") &&
         message["params"].is_object() && message["params"].contains("uri") &&
         message["params"]["uri"].is_string() &&
         filter_.uris.count(message["params"]["uri"].get<std::string>()) > 0) ||
        method == "notifications/subscriptions/acknowledged";
    if (!wanted) return;
  }
  // Everything on the listen's stream carries its id, its final result too.
  json tagged = message;
  json& holder = method.empty() ? tagged["result"] : tagged["params"];
  if (method.empty() && !holder.is_object()) {
    carrier_->send_related(message, id_);  // an error: as it is
    return;
  }
  if (!holder.is_object()) holder = json::object();
  if (!holder.contains("_meta") || !holder["_meta"].is_object()) holder["_meta"] = json::object();
  holder["_meta"][modern::kSubscriptionIdKey] = id_;
  carrier_->send_related(tagged, id_);
}

std::variant<ListenFilter, std::string> Listeners::read_filter(const json& params) {
  ListenFilter filter;
  if (!params.is_object() || !params.contains("notifications")) return filter;
  const json& asked = params["notifications"];
  if (!asked.is_object()) return std::string("\"notifications\" must be an object");
  auto flag = [&](const char* key, bool& out) -> std::string {
    auto it = asked.find(key);
    if (it == asked.end() || it->is_null()) return "";
    if (!it->is_boolean()) return "\"notifications." + std::string(key) + "\" must be a boolean";
    out = it->get<bool>();
    return "";
  };
  for (auto [key, out] : {std::pair<const char*, bool*>{"toolsListChanged", &filter.tools},
                          {"promptsListChanged", &filter.prompts},
                          {"resourcesListChanged", &filter.resources}}) {
    if (std::string bad = flag(key, *out); !bad.empty()) return bad;
  }
  if (auto it = asked.find("resourceSubscriptions"); it != asked.end() && !it->is_null()) {
    if (!it->is_array()) {
      return std::string("\"notifications.resourceSubscriptions\" must be an array of URIs");
    }
    if (it->size() > kMaxUris) {
      return "\"notifications.resourceSubscriptions\" names " + std::to_string(it->size()) +
             " URIs, over the limit of " + std::to_string(kMaxUris);
    }
    for (const json& uri : *it) {
      if (!uri.is_string() || uri.get_ref<const std::string&>().empty()) {
        return std::string("\"notifications.resourceSubscriptions\" must hold URIs (strings)");
      }
      filter.uris.insert(uri.get<std::string>());
    }
  }
  return filter;
}

struct Listeners::Entry {
  json id;
  std::shared_ptr<Session> listener;
  std::shared_ptr<CallControl> control;
  std::function<void()> ended;
  std::optional<std::stop_callback<std::function<void()>>> on_stop;
};

bool Listeners::add(const json& id, std::shared_ptr<Session> listener,
                    const std::shared_ptr<CallControl>& control, std::function<void()> ended) {
  auto entry = std::make_shared<Entry>();
  entry->id = id;
  entry->listener = std::move(listener);
  entry->control = control;
  entry->ended = std::move(ended);
  std::uint64_t key = 0;
  {
    std::lock_guard lock(mutex_);
    graveyard_.clear();
    if (entries_.size() >= kMaxListeners) return false;
    key = next_++;
    entries_.emplace(key, entry);
  }
  // Runs at once when the control was stopped already. It leaves the entry,
  // and with it this callback, to the graveyard, emptied on a later add():
  // a callback does not destroy itself.
  entry->on_stop.emplace(control->stop_token(), std::function<void()>([this, key] {
                           std::shared_ptr<Entry> gone;
                           {
                             std::lock_guard lock(mutex_);
                             auto it = entries_.find(key);
                             if (it == entries_.end()) return;
                             gone = it->second;
                             entries_.erase(it);
                             graveyard_.push_back(gone);
                           }
                           // Its session goes now: those that hold it weakly tell it nothing more.
                           std::shared_ptr<Session> leaving = std::move(gone->listener);
                           if (gone->ended) gone->ended();
                         }));
  return true;
}

void Listeners::end_all() {
  std::map<std::uint64_t, std::shared_ptr<Entry>> ending;
  {
    std::lock_guard lock(mutex_);
    ending.swap(entries_);
    graveyard_.clear();
  }
  for (auto& [key, entry] : ending) {
    entry->on_stop.reset();  // ended here, not by a stop
    entry->listener->send_related(jsonrpc::make_result(entry->id, json::object()), entry->id);
    entry->listener->end_call(entry->id);
  }
}

std::size_t Listeners::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace toolmux
