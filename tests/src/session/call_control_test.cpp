// CallControl: the flags a call's threads look at, and the stop it requests so
// that a waiter is woken instead of polling them.
#include <catch2/catch.hpp>

#include <chrono>
#include <stop_token>

#include "src/session/session.h"

using namespace toolmux;

TEST_CASE("cancel and abort set their flag and wake a stop callback at once") {
  CallControl cancelled;
  bool woken = false;
  bool flag_when_woken = false;
  std::stop_callback wake(cancelled.stop_token(), [&] {
    woken = true;
    flag_when_woken = cancelled.cancelled();
  });
  CHECK_FALSE(woken);
  cancelled.cancel();
  CHECK(woken);  // on this thread, before cancel() returned
  CHECK(flag_when_woken);
  CHECK(cancelled.stop_requested());

  CallControl aborted;
  bool aborted_when_woken = false;
  std::stop_callback wake_too(aborted.stop_token(),
                              [&] { aborted_when_woken = aborted.aborted(); });
  aborted.abort();
  CHECK(aborted_when_woken);
}

TEST_CASE("a deadline that passes requests no stop: waiters wait until deadline()") {
  CallControl control;
  control.set_deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  CHECK(control.expired());
  CHECK(control.stop_requested());
  CHECK_FALSE(control.stop_token().stop_requested());
}
