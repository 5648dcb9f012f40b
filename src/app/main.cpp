// toolmux: the executable. Runs the command line with the built-in catalog.
#include <unistd.h>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "src/app/toolmux.h"

int main(int argc, char** argv) {
  const int code = toolmux::run_toolmux(std::vector<std::string>(argv + 1, argv + argc), {});
  // Calls abandoned after a timeout may still be running on detached threads:
  // leave without running static destructors under them.
  std::cout.flush();
  std::fflush(nullptr);
  _exit(code);
}
