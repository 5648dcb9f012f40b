# Test names CTest can hold, checked (`cmake -P tests/test_names.cmake`; CTest
# entry `test_names`). catch_discover_tests registers each TEST_CASE under its
# name, and a CMake list splits at ';': a name with one becomes two tests that
# match nothing and fail. The run fails naming the file and the test.
cmake_minimum_required(VERSION 3.22)
get_filename_component(root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
file(GLOB_RECURSE sources "${root}/tests/src/*.cpp")
set(bad 0)
foreach(source IN LISTS sources)
  file(READ "${source}" text)
  # A name is one or more string literals right after TEST_CASE( or SCENARIO(.
  string(REGEX MATCHALL "(TEST_CASE|SCENARIO)\\([ \t\r\n]*(\"([^\"\\\\]|\\\\.)*\"[ \t\r\n]*)+" cases "${text}")
  foreach(case IN LISTS cases)
    # MATCHALL already split a name with ';' into pieces: the piece after the
    # ';' no longer starts with TEST_CASE(.
    if(NOT case MATCHES "^(TEST_CASE|SCENARIO)\\(")
      file(RELATIVE_PATH rel "${root}" "${source}")
      message(SEND_ERROR "${rel}: a test name has ';' (CTest would split it) near: ${case}")
      set(bad 1)
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "test names with ';' found")
endif()
