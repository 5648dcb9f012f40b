// Composing stages: the first outermost, and the groups of a CallChain.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "src/pipeline/compose.h"

using namespace toolmux;

namespace {

// A stage that notes its name on the way in and, as "/name", on the way out.
CallStage noting(std::vector<std::string>& order, std::string name) {
  return [&order, name](CallHandler next) -> CallHandler {
    return [&order, name, next](ToolCall& call) {
      order.push_back(name);
      CallResult out = next(call);
      order.push_back("/" + name);
      return out;
    };
  };
}

}  // namespace

TEST_CASE("stages compose with the first one outermost") {
  std::vector<std::string> order;
  auto stage = [&order](std::string name) -> CallStage {
    return [&order, name](CallHandler next) -> CallHandler {
      return [&order, name, next](ToolCall& call) {
        order.push_back(name);
        return next(call);
      };
    };
  };
  CallHandler h = compose({stage("a"), stage("b")}, [&order](ToolCall&) {
    order.push_back("end");
    return CallResult::answered(ToolResult::text("end"));
  });
  ToolCall call;
  h(call);
  CHECK(order == std::vector<std::string>{"a", "b", "end"});
}

TEST_CASE(
    "a chain runs around, request, handler, and the result stages see the answer in their order") {
  std::vector<std::string> order;
  CallChain chain;
  chain.around = {noting(order, "around")};
  chain.request = {noting(order, "request1"), noting(order, "request2")};
  chain.handler = {noting(order, "handler")};
  chain.result = {noting(order, "result1"), noting(order, "result2")};
  CallHandler h = compose(chain, [&order](ToolCall&) {
    order.push_back("end");
    return CallResult::answered(ToolResult::text("end"));
  });
  ToolCall call;
  h(call);
  CHECK(order == std::vector<std::string>{"around", "request1", "request2", "result2", "result1",
                                          "handler", "end", "/handler", "/result1", "/result2",
                                          "/request2", "/request1", "/around"});
}
