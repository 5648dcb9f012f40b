#include "src/builtins/result_resources.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "catalog/provider_router.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_context.h"

using toolmux::LazyResultStore;
using toolmux::ProviderRouter;
using toolmux::ResultStoreOptions;
using toolmux::testing::TempDir;
using toolmux::testing::TestContext;

namespace {

// The context of a request from the session `id`.
class SessionContext final : public TestContext {
 public:
  explicit SessionContext(std::string id) : id_(std::move(id)) {}
  const std::string& session_id() const override { return id_; }

 private:
  std::string id_;
};

struct Fixture {
  TempDir dir;
  std::shared_ptr<LazyResultStore> store;
  std::shared_ptr<ProviderRouter> router;
  Fixture() {
    ResultStoreOptions options;
    options.data_dir = dir.path();
    store = std::make_shared<LazyResultStore>(options);
    router = ProviderRouter::create({toolmux::make_result_resources(store)}, {});
  }
  // Stores `text` for `owner`; returns its resource URI.
  std::string put(const std::string& owner, const std::string& text) {
    auto opened = store->get();
    REQUIRE(opened.ok());
    const auto id = (*opened)->put(owner, text);
    REQUIRE(id.ok());
    REQUIRE(!id->empty());
    return std::string(toolmux::kResultUriPrefix) + *id;
  }
};

}  // namespace

TEST_CASE("a session's stored results are listed as its resources, oldest first") {
  Fixture f;
  const std::string first = f.put("session-a", "first result é");
  const std::string second = f.put("session-a", "second");
  f.put("session-b", "not yours");
  SessionContext a("session-a");
  auto listing = f.router->list_resources(a);
  REQUIRE(listing.items.size() == 2);
  CHECK(listing.items[0].uri == first);
  CHECK(listing.items[1].uri == second);
  CHECK(listing.items[0].mime_type == "text/plain");
  CHECK(listing.items[0].size == std::string("first result é").size());
  CHECK(listing.items[0].description.find("14 characters") != std::string::npos);
}

TEST_CASE("a stored result reads whole for its session and is not found for any other") {
  Fixture f;
  const std::string uri = f.put("session-a", std::string(50000, 'x') + "end");
  SessionContext a("session-a");
  auto read = f.router->read_resource(uri, a);
  REQUIRE(read.ok());
  REQUIRE(read.value().size() == 1);
  CHECK(read.value()[0].to_json() == toolmux::json{{"uri", uri},
                                                   {"mimeType", "text/plain"},
                                                   {"text", std::string(50000, 'x') + "end"}});

  SessionContext b("session-b");
  auto foreign = f.router->read_resource(uri, b);
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.error().code == -32002);
  CHECK(foreign.error().data == toolmux::json{{"uri", uri}});
  CHECK(f.router->subscribe(uri, b).error().code == -32002);
  CHECK(f.router->subscribe(uri, a).ok());
  CHECK(f.router->list_resources(b).items.empty());

  // An id that was never given out looks exactly the same.
  auto unknown = f.router->read_resource(std::string(toolmux::kResultUriPrefix) + "nope", a);
  CHECK(unknown.error().code == -32002);
}

TEST_CASE("a stored image reads back as a blob of its type, stored blocks as JSON") {
  Fixture f;
  auto opened = f.store->get();
  REQUIRE(opened.ok());
  toolmux::ResultStore* store = *opened;
  const std::string png = "iVBORw0KGgo=";
  const std::string blocks = R"([{"type":"text","text":"x"}])";
  const std::string png_uri =
      std::string(toolmux::kResultUriPrefix) +
      store->put("session-a", png, toolmux::StoredFormat{"image/png", true}).value();
  const std::string blocks_uri =
      std::string(toolmux::kResultUriPrefix) +
      store->put("session-a", blocks, toolmux::StoredFormat{"application/json", false}).value();
  SessionContext a("session-a");
  auto listing = f.router->list_resources(a);
  REQUIRE(listing.items.size() == 2);
  CHECK(listing.items[0].mime_type == "image/png");
  CHECK_THAT(listing.items[0].description, Catch::EndsWith(": 12 characters of base64."));
  CHECK(listing.items[1].mime_type == "application/json");
  auto image = f.router->read_resource(png_uri, a);
  REQUIRE(image.ok());
  CHECK(image.value()[0].to_json() ==
        toolmux::json{{"uri", png_uri}, {"mimeType", "image/png"}, {"blob", png}});
  auto json_text = f.router->read_resource(blocks_uri, a);
  REQUIRE(json_text.ok());
  CHECK(json_text.value()[0].to_json() ==
        toolmux::json{{"uri", blocks_uri}, {"mimeType", "application/json"}, {"text", blocks}});
}

TEST_CASE("the results template is listed and completes the session's own ids") {
  Fixture f;
  const std::string uri = f.put("session-a", "text");
  f.put("session-b", "other");
  SessionContext a("session-a");
  auto templates = f.router->list_resource_templates(a);
  REQUIRE(templates.items.size() == 1);
  CHECK(templates.items[0].uri_template == "toolmux://results/{id}");
  auto ids = f.router->complete({toolmux::CompletionRef::Kind::resource, "toolmux://results/{id}"},
                                {"id", "", {}}, a);
  REQUIRE(ids.ok());
  CHECK(ids.value().values ==
        std::vector<std::string>{uri.substr(toolmux::kResultUriPrefix.size())});
}

TEST_CASE("before anything is stored, no session has results and the store stays closed") {
  Fixture f;
  SessionContext a("session-a");
  CHECK(f.router->list_resources(a).items.empty());
  CHECK(f.router->read_resource("toolmux://results/x", a).error().code == -32002);
  CHECK(f.store->if_open() == nullptr);
}
