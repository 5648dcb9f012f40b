#include "catalog/provider_router.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catalog/uri_template.h"
#include "tests/support/test_context.h"

using toolmux::CallContext;
using toolmux::Completion;
using toolmux::CompletionRef;
using toolmux::CompletionRequest;
using toolmux::Outcome;
using toolmux::Prompt;
using toolmux::PromptArgument;
using toolmux::PromptProvider;
using toolmux::PromptResult;
using toolmux::ProviderError;
using toolmux::ProviderEventSink;
using toolmux::ProviderRouter;
using toolmux::ProviderStatus;
using toolmux::Resource;
using toolmux::ResourceContents;
using toolmux::ResourceProvider;
using toolmux::ResourceTemplate;
using toolmux::testing::TestContext;

namespace {

// A provider with a fixed set of readable resources; it lists `listed` of
// them, has `templates`, and reads as "<label>:<uri>".
class Resources final : public ResourceProvider {
 public:
  Resources(std::string label, std::vector<std::string> listed,
            std::vector<std::string> templates = {})
      : label_(std::move(label)), listed_(std::move(listed)), templates_(std::move(templates)) {}

  // Reads every URI, listed or not (a catch-all such as a file server).
  bool reads_anything = false;
  // Answers every request with this error instead.
  std::optional<ProviderError> failure;
  std::vector<std::string> subscribed, unsubscribed;

  Outcome<std::vector<Resource>> list_resources(CallContext&) override {
    if (failure) return *failure;
    std::vector<Resource> out;
    for (const auto& uri : listed_) out.push_back({uri, "name of " + uri, "", "", "", {}, nullptr});
    return out;
  }
  Outcome<std::vector<ResourceTemplate>> list_resource_templates(CallContext&) override {
    if (failure) return *failure;
    std::vector<ResourceTemplate> out;
    for (const auto& t : templates_) out.push_back({t, "template " + t, "", "", "", nullptr});
    return out;
  }
  Outcome<std::vector<ResourceContents>> read_resource(const std::string& uri,
                                                       CallContext&) override {
    if (failure) return *failure;
    bool mine = reads_anything;
    for (const auto& u : listed_) mine = mine || u == uri;
    for (const auto& t : templates_) mine = mine || toolmux::match_uri_template(t, uri).has_value();
    if (!mine) return ProviderError::resource_not_found(uri);
    return std::vector{ResourceContents::text_of(uri, "text/plain", label_ + ":" + uri)};
  }
  ProviderStatus subscribe(const std::string& uri, CallContext&) override {
    subscribed.push_back(uri);
    return toolmux::success();
  }
  void unsubscribe(const std::string& uri) override { unsubscribed.push_back(uri); }
  Outcome<Completion> complete(const std::string& uri_template, const CompletionRequest& request,
                               CallContext&) override {
    return toolmux::complete_from({label_ + ":" + uri_template + ":" + request.argument}, label_);
  }
  void forget(const std::string& uri) {
    std::erase(listed_, uri);
    events().resources_list_changed();
  }

 private:
  std::string label_;
  std::vector<std::string> listed_;
  std::vector<std::string> templates_;
};

class Prompts final : public PromptProvider {
 public:
  Prompts(std::string label, std::vector<Prompt> prompts)
      : label_(std::move(label)), prompts_(std::move(prompts)) {}
  std::vector<std::map<std::string, std::string>> got;

  Outcome<std::vector<Prompt>> list_prompts(CallContext&) override { return prompts_; }
  Outcome<PromptResult> get_prompt(const std::string& name,
                                   const std::map<std::string, std::string>& arguments,
                                   CallContext&) override {
    got.push_back(arguments);
    PromptResult r;
    r.messages.push_back({"user", {{"type", "text"}, {"text", label_ + " " + name}}});
    return r;
  }
  Outcome<Completion> complete(const std::string&, const CompletionRequest& request,
                               CallContext&) override {
    return toolmux::complete_from({"red", "green", "grey"}, request.value);
  }
  void add(Prompt p) {
    prompts_.push_back(std::move(p));
    events().prompts_list_changed();
  }

 private:
  std::string label_;
  std::vector<Prompt> prompts_;
};

Prompt prompt(std::string name, std::vector<PromptArgument> arguments = {}) {
  Prompt p;
  p.name = std::move(name);
  p.description = "the prompt " + p.name;
  p.arguments = std::move(arguments);
  return p;
}

struct CountingSink final : ProviderEventSink {
  std::vector<std::string> updated;
  int resources_changed = 0;
  int prompts_changed = 0;
  void resource_updated(const std::string& uri) override { updated.push_back(uri); }
  void resources_list_changed() override { ++resources_changed; }
  void prompts_list_changed() override { ++prompts_changed; }
};

std::vector<std::string> uris(const std::vector<Resource>& resources) {
  std::vector<std::string> out;
  for (const auto& r : resources) out.push_back(r.uri);
  return out;
}

std::string text_of(const Outcome<std::vector<ResourceContents>>& read) {
  REQUIRE(read.ok());
  REQUIRE(read.value().size() == 1);
  return read.value()[0].text;
}

}  // namespace

TEST_CASE("resources/list joins the providers in order and leaves out a URI listed twice") {
  auto a = std::make_shared<Resources>("a", std::vector<std::string>{"x://1", "x://2"});
  auto b = std::make_shared<Resources>("b", std::vector<std::string>{"x://2", "x://3"});
  auto router = ProviderRouter::create({a, b}, {});
  TestContext context;
  auto listing = router->list_resources(context);
  CHECK(uris(listing.items) == std::vector<std::string>{"x://1", "x://2", "x://3"});
  REQUIRE(listing.problems.size() == 1);
  CHECK(listing.problems[0] ==
        "resource provider 2: resource \"x://2\" is left out: an earlier provider lists that URI");
  // The URI is routed to the provider that listed it.
  CHECK(text_of(router->read_resource("x://2", context)) == "a:x://2");
  CHECK(text_of(router->read_resource("x://3", context)) == "b:x://3");
}

TEST_CASE("a provider that fails to list is left out, named, and the others still list") {
  auto a = std::make_shared<Resources>("a", std::vector<std::string>{"x://1"});
  a->failure = ProviderError::unavailable("upstream \"docs\" is not running");
  auto b = std::make_shared<Resources>("b", std::vector<std::string>{"x://3"});
  auto router = ProviderRouter::create({a, b}, {});
  TestContext context;
  auto listing = router->list_resources(context);
  CHECK(uris(listing.items) == std::vector<std::string>{"x://3"});
  CHECK(listing.problems ==
        std::vector<std::string>{"resource provider 1: upstream \"docs\" is not running"});
}

TEST_CASE("a listed URI goes to its lister even when an earlier provider reads anything") {
  auto catch_all = std::make_shared<Resources>("all", std::vector<std::string>{});
  catch_all->reads_anything = true;
  auto lister = std::make_shared<Resources>("lister", std::vector<std::string>{"x://mine"});
  auto router = ProviderRouter::create({catch_all, lister}, {});
  TestContext context;
  // Not listed yet: the providers are asked in order, and the first answers.
  CHECK(text_of(router->read_resource("x://mine", context)) == "all:x://mine");
  router->list_resources(context);
  CHECK(text_of(router->read_resource("x://mine", context)) == "lister:x://mine");
}

TEST_CASE("a URI that fills in a provider's template goes to that provider") {
  auto catch_all = std::make_shared<Resources>("all", std::vector<std::string>{});
  catch_all->reads_anything = true;
  auto templated = std::make_shared<Resources>("t", std::vector<std::string>{},
                                               std::vector<std::string>{"db://{table}/rows"});
  auto router = ProviderRouter::create({catch_all, templated}, {});
  TestContext context;
  CHECK(text_of(router->read_resource("db://users/rows", context)) == "t:db://users/rows");
  CHECK(text_of(router->read_resource("db://a/b/rows", context)) == "all:db://a/b/rows");
}

TEST_CASE("an unrouted URI: the first answer other than not found wins, an error included") {
  auto none = std::make_shared<Resources>("none", std::vector<std::string>{});
  auto broken = std::make_shared<Resources>("broken", std::vector<std::string>{});
  broken->failure = ProviderError{-32603, "upstream timed out", nullptr};
  auto all = std::make_shared<Resources>("all", std::vector<std::string>{});
  all->reads_anything = true;
  TestContext context;

  auto read = ProviderRouter::create({none, all, broken}, {})->read_resource("x://q", context);
  CHECK(text_of(read) == "all:x://q");
  auto failed = ProviderRouter::create({none, broken, all}, {})->read_resource("x://q", context);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == -32603);
  CHECK(failed.error().message == "upstream timed out");
}

TEST_CASE("a URI no provider has is -32002 Resource not found with the uri in data") {
  auto a = std::make_shared<Resources>("a", std::vector<std::string>{"x://1"});
  auto router = ProviderRouter::create({a}, {});
  TestContext context;
  auto read = router->read_resource("x://nope", context);
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().code == -32002);
  CHECK(read.error().message == "Resource not found");
  CHECK(read.error().data == toolmux::json{{"uri", "x://nope"}});
  CHECK(router->subscribe("x://nope", context).error().code == -32002);
  CHECK(ProviderRouter::create({}, {})->read_resource("x://1", context).error().code == -32002);
}

TEST_CASE("subscribe goes to the owner, and unsubscribe to the same owner") {
  auto a = std::make_shared<Resources>("a", std::vector<std::string>{"x://1"});
  auto b = std::make_shared<Resources>("b", std::vector<std::string>{},
                                       std::vector<std::string>{"y://{id}"});
  auto router = ProviderRouter::create({a, b}, {});
  TestContext context;
  REQUIRE(router->subscribe("y://7", context).ok());
  CHECK(b->subscribed == std::vector<std::string>{"y://7"});
  CHECK(a->subscribed.empty());
  router->unsubscribe("y://7");
  CHECK(b->unsubscribed == std::vector<std::string>{"y://7"});
  router->unsubscribe("y://7");  // not subscribed any more: nothing more to tell
  CHECK(b->unsubscribed.size() == 1);
}

TEST_CASE("resource templates of every provider are listed in order") {
  auto a = std::make_shared<Resources>("a", std::vector<std::string>{},
                                       std::vector<std::string>{"a://{x}"});
  auto b = std::make_shared<Resources>("b", std::vector<std::string>{},
                                       std::vector<std::string>{"b://{y}", "b://{y}/z"});
  TestContext context;
  auto listing = ProviderRouter::create({a, b}, {})->list_resource_templates(context);
  REQUIRE(listing.items.size() == 3);
  CHECK(listing.items[0].uri_template == "a://{x}");
  CHECK(listing.items[2].to_json() ==
        toolmux::json{{"uriTemplate", "b://{y}/z"}, {"name", "template b://{y}/z"}});
}

TEST_CASE("prompt names are unique across providers: a later one of the same name is left out") {
  auto a = std::make_shared<Prompts>("a", std::vector<Prompt>{prompt("greet"), prompt("sum")});
  auto b = std::make_shared<Prompts>("b", std::vector<Prompt>{prompt("greet"), prompt("plan")});
  auto router = ProviderRouter::create({}, {a, b});
  TestContext context;
  auto listing = router->list_prompts(context);
  std::vector<std::string> names;
  for (const auto& p : listing.items) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"greet", "sum", "plan"});
  CHECK(listing.problems ==
        std::vector<std::string>{"prompt provider 2: prompt \"greet\" is left out: prompt provider "
                                 "1 has a prompt of that name"});
  auto got = router->get_prompt("plan", {}, context);
  REQUIRE(got.ok());
  CHECK(got.value().to_json()["messages"][0]["content"]["text"] == "b plan");
  CHECK(router->get_prompt("greet", {}, context).value().messages[0].content["text"] == "a greet");
}

TEST_CASE("prompts/get names what is wrong: an unknown prompt, a missing or unknown argument") {
  auto a = std::make_shared<Prompts>(
      "a", std::vector<Prompt>{prompt("review", {{"code", "", "", true}, {"style", "", "", false}}),
                               prompt("plain")});
  auto router = ProviderRouter::create({}, {a});
  TestContext context;

  auto unknown = router->get_prompt("reveiw", {}, context);
  CHECK(unknown.error().code == -32602);
  CHECK(unknown.error().message == "Invalid params: unknown prompt \"reveiw\"");

  auto missing = router->get_prompt("review", {{"style", "terse"}}, context);
  CHECK(missing.error().code == -32602);
  CHECK(missing.error().message == "Invalid params: prompt \"review\" needs the argument \"code\"");

  auto extra = router->get_prompt("review", {{"code", "x"}, {"colour", "red"}}, context);
  CHECK(extra.error().message ==
        "Invalid params: prompt \"review\" has no argument \"colour\"; its arguments are "
        "\"code\", \"style\"");
  CHECK(router->get_prompt("plain", {{"x", "1"}}, context).error().message ==
        "Invalid params: prompt \"plain\" has no argument \"x\"; it takes none");
  CHECK(a->got.empty());  // the provider saw none of these

  REQUIRE(router->get_prompt("review", {{"code", "x"}}, context).ok());
  CHECK(a->got == std::vector<std::map<std::string, std::string>>{{{"code", "x"}}});
}

TEST_CASE("a prompt added after a listing is found: its provider said the list changed") {
  auto a = std::make_shared<Prompts>("a", std::vector<Prompt>{prompt("one")});
  auto router = ProviderRouter::create({}, {a});
  auto sink = std::make_shared<CountingSink>();
  router->connect(sink);
  TestContext context;
  router->list_prompts(context);
  a->add(prompt("two"));
  CHECK(sink->prompts_changed == 1);
  CHECK(router->get_prompt("two", {}, context).ok());
}

TEST_CASE("a resource its provider no longer lists is no longer routed to it") {
  auto catch_all = std::make_shared<Resources>("all", std::vector<std::string>{});
  catch_all->reads_anything = true;
  auto lister = std::make_shared<Resources>("lister", std::vector<std::string>{"x://gone"});
  auto router = ProviderRouter::create({catch_all, lister}, {});
  auto sink = std::make_shared<CountingSink>();
  router->connect(sink);
  TestContext context;
  router->list_resources(context);
  CHECK(text_of(router->read_resource("x://gone", context)) == "lister:x://gone");
  lister->forget("x://gone");
  CHECK(sink->resources_changed == 1);
  CHECK(text_of(router->read_resource("x://gone", context)) == "all:x://gone");
  lister->events().resource_updated("x://1");
  CHECK(sink->updated == std::vector<std::string>{"x://1"});
}

TEST_CASE("completion goes to the prompt's or the template's provider, for a declared argument") {
  auto prompts = std::make_shared<Prompts>(
      "p", std::vector<Prompt>{prompt("paint", {{"colour", "", "", true}})});
  auto resources = std::make_shared<Resources>("r", std::vector<std::string>{},
                                               std::vector<std::string>{"db://{table}/rows"});
  auto router = ProviderRouter::create({resources}, {prompts});
  TestContext context;

  auto colours =
      router->complete({CompletionRef::Kind::prompt, "paint"}, {"colour", "gr", {}}, context);
  REQUIRE(colours.ok());
  CHECK(colours.value().values == std::vector<std::string>{"green", "grey"});
  CHECK(colours.value().to_json() ==
        toolmux::json{{"values", {"green", "grey"}}, {"total", 2}, {"hasMore", false}});

  auto table = router->complete({CompletionRef::Kind::resource, "db://{table}/rows"},
                                {"table", "", {}}, context);
  REQUIRE(table.ok());
  CHECK(table.value().values == std::vector<std::string>{"r:db://{table}/rows:table"});

  CHECK(router->complete({CompletionRef::Kind::prompt, "paint"}, {"size", "", {}}, context)
            .error()
            .message ==
        "Invalid params: prompt \"paint\" has no argument \"size\"; its arguments are \"colour\"");
  CHECK(router->complete({CompletionRef::Kind::prompt, "draw"}, {"colour", "", {}}, context)
            .error()
            .message == "Invalid params: unknown prompt \"draw\"");
  CHECK(
      router
          ->complete({CompletionRef::Kind::resource, "db://{table}/rows"}, {"row", "", {}}, context)
          .error()
          .message ==
      "Invalid params: resource template \"db://{table}/rows\" has no variable \"row\"; its "
      "variables are \"table\"");
  CHECK(router->complete({CompletionRef::Kind::resource, "db://x"}, {"a", "", {}}, context)
            .error()
            .message == "Invalid params: unknown resource template \"db://x\"");
}

TEST_CASE("a completion longer than 100 values is cut, with hasMore and the total") {
  std::vector<std::string> many;
  for (int i = 0; i < 150; ++i) many.push_back("v" + std::to_string(i));
  auto json = toolmux::complete_from(many, "v").to_json();
  CHECK(json["values"].size() == 100);
  CHECK(json["total"] == 150);
  CHECK(json["hasMore"] == true);
}
