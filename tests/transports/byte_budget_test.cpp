#include "transports/byte_budget.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

using toolmux::ByteBudget;
using namespace std::chrono_literals;

TEST_CASE("a budget gives what it has, and waits for what is given back") {
  ByteBudget budget(100);
  CHECK(budget.acquire(60, 0ms));
  CHECK(budget.in_use() == 60);
  CHECK_FALSE(budget.acquire(50, 50ms));  // nothing taken when it times out
  CHECK(budget.in_use() == 60);
  auto waiting = std::async(std::launch::async, [&] { return budget.acquire(50, 5s); });
  std::this_thread::sleep_for(50ms);
  budget.release(60);
  CHECK(waiting.get());
  CHECK(budget.in_use() == 50);
}

TEST_CASE("more than the whole budget is the whole budget") {
  ByteBudget budget(100);
  CHECK(budget.acquire(1000, 0ms));
  CHECK(budget.in_use() == 100);
  CHECK_FALSE(budget.acquire(1, 0ms));
  budget.release(1000);
  CHECK(budget.in_use() == 0);
}

TEST_CASE("a Hold gives its bytes back once, when released or destroyed") {
  ByteBudget budget(100);
  REQUIRE(budget.acquire(40, 0ms));
  {
    ByteBudget::Hold held(budget, 40);
    REQUIRE(budget.acquire(30, 0ms));
    ByteBudget::Hold other(budget, 30);
    other.release();
    CHECK(budget.in_use() == 40);
    ByteBudget::Hold moved = std::move(held);
    CHECK(budget.in_use() == 40);
  }
  CHECK(budget.in_use() == 0);
}
