// How a resource or prompt provider tells the server that something changed:
// a resource it serves was updated, or its list of resources or prompts
// changed. The server sends the matching notifications to its clients
// (notifications/resources/updated to the sessions subscribed to the URI,
// .../list_changed to every session).
//
// A provider reports through the ProviderEvents it holds; the server connects
// that to its sink when it starts serving the provider. Before that, and once
// the sink is gone, reports are dropped. Thread-safe: report from any thread,
// at any time, including while the server calls the provider.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace toolmux {

// Implemented by the server (and by the router, which forwards).
class ProviderEventSink {
 public:
  virtual ~ProviderEventSink() = default;
  virtual void resource_updated(const std::string& uri) = 0;
  virtual void resources_list_changed() = 0;
  virtual void prompts_list_changed() = 0;
};

class ProviderEvents {
 public:
  // Replaces the sink reports go to. The sink is not kept alive by this.
  void connect(std::weak_ptr<ProviderEventSink> sink) {
    std::lock_guard lock(mutex_);
    sink_ = std::move(sink);
  }
  void resource_updated(const std::string& uri) const {
    if (auto sink = current()) sink->resource_updated(uri);
  }
  void resources_list_changed() const {
    if (auto sink = current()) sink->resources_list_changed();
  }
  void prompts_list_changed() const {
    if (auto sink = current()) sink->prompts_list_changed();
  }

 private:
  std::shared_ptr<ProviderEventSink> current() const {
    std::lock_guard lock(mutex_);
    return sink_.lock();
  }
  mutable std::mutex mutex_;
  std::weak_ptr<ProviderEventSink> sink_;
};

}  // namespace toolmux
