#include "src/base/process_id_window.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using toolmux::ProcessIdWindow;

TEST_CASE("the window holds the pids given out after it opened, and no older ones") {
  ProcessIdWindow window(1000, 32768);
  CHECK_FALSE(window.covers(1000));
  CHECK_FALSE(window.covers(1001));
  window.advance_to(1050);
  CHECK(window.covers(1001));
  CHECK(window.covers(1050));
  CHECK_FALSE(window.covers(1000));
  CHECK_FALSE(window.covers(1051));
  CHECK_FALSE(window.covers(999));
  CHECK_FALSE(window.covers_everything());
}

TEST_CASE("past pid_max the counter wraps, and the window wraps with it") {
  ProcessIdWindow window(32700, 32768);
  window.advance_to(32760);
  window.advance_to(400);  // wrapped: 32761..32767, then from 300 up
  CHECK(window.covers(32701));
  CHECK(window.covers(32767));
  CHECK(window.covers(300));
  CHECK(window.covers(400));
  CHECK_FALSE(window.covers(401));
  CHECK_FALSE(window.covers(32700));
  CHECK_FALSE(window.covers(20000));
}

TEST_CASE("a counter that went half way round or more may have passed the start: everything") {
  ProcessIdWindow window(1000, 32768);
  window.advance_to(10000);
  CHECK_FALSE(window.covers_everything());
  window.advance_to(17384);  // 16,384 travelled: half of pid_max
  CHECK(window.covers_everything());
  CHECK(window.covers(5));
  CHECK(window.covers(999));
}

TEST_CASE("an unreadable counter, or one past pid_max, covers everything") {
  CHECK(ProcessIdWindow(std::nullopt, 32768).covers(5));
  ProcessIdWindow window(1000, 32768);
  window.advance_to(std::nullopt);
  CHECK(window.covers(5));
  ProcessIdWindow beyond(1000, 32768);
  beyond.advance_to(40000);
  CHECK(beyond.covers(5));
}

TEST_CASE("on this machine a child started after the window opened is inside it") {
  ProcessIdWindow window = ProcessIdWindow::open_now();
  const pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  window.sample_now();
  CHECK(window.covers(child));
  CHECK_FALSE(window.covers(getpid()));
  int status = 0;
  waitpid(child, &status, 0);
}

TEST_CASE("the window lists its pids when there are few, wrapping past pid_max") {
  ProcessIdWindow window(32764, 32768);
  CHECK(window.pids(10) == std::vector<long>{});
  window.advance_to(32767);
  CHECK(window.pids(10) == std::vector<long>{32765, 32766, 32767});
  window.advance_to(2);
  CHECK(window.pids(10) == std::vector<long>{32765, 32766, 32767, 1, 2});
  CHECK_FALSE(window.pids(4));
  CHECK_FALSE(ProcessIdWindow(std::nullopt, 32768).pids(10));
}
