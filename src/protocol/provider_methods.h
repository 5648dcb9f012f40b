// The MCP methods of resources, prompts and completion (resources/list,
// resources/templates/list, resources/read, resources/subscribe,
// resources/unsubscribe, prompts/list, prompts/get, completion/complete),
// served from the ProviderRouter of the catalog the server currently serves.
//
// Params are checked on the reader's thread (a bad one is -32602, naming what
// was wrong); the providers are then called on a thread of their own, as a
// tools/call is, so a slow provider (an upstream server) holds up nothing
// else. Each request is registered with the session like a tools/call:
// notifications/cancelled stops it (and it gets no response), and it has a
// deadline, counted from when it was received, after which it is answered
// with an error. It waits for a place to run, or is refused, as a tools/call
// is (`admission`, src/session/call_admission.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/assembly/tool_catalog.h"
#include "src/base/jsonrpc.h"
#include "src/base/logger.h"
#include "src/base/sealed_box.h"
#include "src/protocol/resource_subscriptions.h"
#include "src/session/call_admission.h"
#include "src/session/session.h"

namespace toolmux {

class ProviderMethods {
 public:
  using Handler = std::function<void(const jsonrpc::Message&, const std::shared_ptr<Session>&)>;

  // `catalog` gives the snapshot to serve each request from (it may change
  // between requests). `page_size`: entries per list page, 0 = all.
  // `state_key` seals the requestState of a 2026-07-28 prompts/get or
  // resources/read that asks its client (src/session/input_exchange.h).
  ProviderMethods(std::function<std::shared_ptr<const Catalog>()> catalog, std::size_t page_size,
                  std::chrono::milliseconds timeout, Logger& logger, CallAdmission& admission,
                  std::shared_ptr<const SealingKey> state_key);

  // Method name and handler, for the server's method table.
  std::vector<std::pair<std::string, Handler>> handlers();

  // Where the providers' change reports go: connect each catalog's router to it.
  const std::shared_ptr<ResourceSubscriptions>& subscriptions() const { return subscriptions_; }

 private:
  struct Request;
  using Work = std::function<Outcome<nlohmann::json>(Request&)>;
  // Runs `work` for request `m` on a call thread and answers with its result.
  void run(const jsonrpc::Message& m, const std::shared_ptr<Session>& session, Work work);

  // A list method: `lister`'s listing, paged, under `key`.
  template <typename T>
  void list(const jsonrpc::Message& m, const std::shared_ptr<Session>& session, const char* key,
            Listing<T> (ProviderRouter::*lister)(CallContext&));

  void list_resources(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void list_templates(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void read_resource(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void subscribe(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void unsubscribe(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void list_prompts(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void get_prompt(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);
  void complete(const jsonrpc::Message& m, const std::shared_ptr<Session>& session);

  const std::function<std::shared_ptr<const Catalog>()> catalog_;
  const std::size_t page_size_;
  const std::chrono::milliseconds timeout_;
  Logger& logger_;
  CallAdmission& admission_;
  const std::shared_ptr<const SealingKey> state_key_;
  std::shared_ptr<ResourceSubscriptions> subscriptions_;
};

}  // namespace toolmux
