# The layers' arrows, checked: each folder listed below and the folders its
# files may include from besides its own (run from anywhere as
# `cmake -P tests/layering.cmake`; CTest entry `layering`). An include of the
# project that points anywhere else fails the run, naming the file, the
# include and the rule.
#
# Folders not listed are not checked yet: issue 12 moves them into layers.
cmake_minimum_required(VERSION 3.22)

# "folder=allowed,allowed": folder may include its own headers and those of the
# allowed folders. External headers (<...>) are not the project's.
set(rules
  "src/base="
)

get_filename_component(root ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
set(violations 0)
foreach(rule IN LISTS rules)
  string(REGEX REPLACE "=.*" "" layer "${rule}")
  string(REGEX REPLACE "^[^=]*=" "" below "${rule}")
  string(REPLACE "," ";" allowed "${below}")
  list(APPEND allowed ${layer})
  file(GLOB files RELATIVE ${root} ${root}/${layer}/*.h ${root}/${layer}/*.cpp)
  if(NOT files)
    message(FATAL_ERROR "layering: no sources in ${layer}")
  endif()
  foreach(file IN LISTS files)
    file(STRINGS ${root}/${file} includes REGEX "^#include \"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
      get_filename_component(header_folder ${header} DIRECTORY)
      if(NOT header_folder IN_LIST allowed)
        message(SEND_ERROR "${file} includes ${header}: ${layer} may include only from ${allowed}")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "layering: ${violations} include(s) against the arrows")
endif()
list(LENGTH rules count)
message(STATUS "layering: the includes of ${count} layer(s) point only down")
