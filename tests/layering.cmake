# The layers' arrows, checked: each folder of the product and the folders its
# files may include from besides its own (run from anywhere as
# `cmake -P tests/layering.cmake`; CTest entry `layering`). The run fails on an
# include of the project that points anywhere else (naming the file, the
# include and the rule), on a folder with sources that has no rule, and on
# rules that let two folders include each other, directly or round a cycle.
# The same arrows are the CMake targets' PRIVATE dependencies (CMakeLists.txt)
# and the picture in docs/architecture.md.
cmake_minimum_required(VERSION 3.22)

# "folder=allowed,allowed": folder may include its own headers and those of the
# allowed folders. External headers (<...>) are not the project's.
set(rules
  "src/base="
  "transports=src/base"
  "catalog=src/base"
  "catalog/providers=catalog,src/base"
  "src/store=catalog,transports,src/base"
  "src/builtins=src/store,catalog,src/base"
  "src/upstream=src/builtins,catalog,transports,src/base"
  "src/assembly=src/upstream,src/builtins,catalog/providers,src/store,catalog,src/base"
  "src/session=src/store,catalog,transports,src/base"
  "src/pipeline=src/session,src/assembly,src/builtins,src/store,catalog,transports,src/base"
  "src/protocol=src/pipeline,src/session,src/assembly,catalog,transports,src/base"
  "src/telemetry=src/base"
  "src/app=src/telemetry,src/protocol,src/pipeline,src/session,src/assembly,src/upstream,src/builtins,src/store,catalog/providers,catalog,transports,src/base"
)

# Includes that run against the arrows and are known, "file>header". The list
# only shrinks; it is empty since the server transport seam (issue 12).
set(known_exceptions)

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
      if(NOT header_folder IN_LIST allowed AND NOT "${file}>${header}" IN_LIST known_exceptions)
        message(SEND_ERROR "${file} includes ${header}: ${layer} may include only from ${allowed}")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

# Every folder that holds sources has a rule.
file(GLOB_RECURSE all_sources RELATIVE ${root} ${root}/src/*.cpp ${root}/src/*.h
  ${root}/catalog/*.cpp ${root}/catalog/*.h ${root}/transports/*.cpp ${root}/transports/*.h)
set(layers "")
foreach(rule IN LISTS rules)
  string(REGEX REPLACE "=.*" "" layer "${rule}")
  list(APPEND layers ${layer})
endforeach()
foreach(file IN LISTS all_sources)
  get_filename_component(folder ${file} DIRECTORY)
  if(NOT folder IN_LIST layers)
    message(SEND_ERROR "${file}: its folder ${folder} has no rule in tests/layering.cmake")
    math(EXPR violations "${violations} + 1")
  endif()
endforeach()

# The rules point one way: following "may include" from any folder never comes
# back to it (so no two folders include each other, directly or round a cycle).
foreach(rule IN LISTS rules)
  string(REGEX REPLACE "=.*" "" start "${rule}")
  set(reached "")
  set(frontier ${start})
  while(frontier)
    list(POP_FRONT frontier current)
    foreach(other IN LISTS rules)
      string(REGEX REPLACE "=.*" "" name "${other}")
      if(name STREQUAL current)
        string(REGEX REPLACE "^[^=]*=" "" below "${other}")
        string(REPLACE "," ";" below "${below}")
        foreach(next IN LISTS below)
          if(next STREQUAL start)
            message(SEND_ERROR "layering: the rules let ${start} reach itself through ${current}")
            math(EXPR violations "${violations} + 1")
          elseif(NOT next IN_LIST reached)
            list(APPEND reached ${next})
            list(APPEND frontier ${next})
          endif()
        endforeach()
      endif()
    endforeach()
  endwhile()
endforeach()

# A database's headers (RocksDB's, libpq's) are included only in src/store:
# every other layer reaches storage through its interfaces.
foreach(file IN LISTS all_sources)
  if(file MATCHES "^src/store/")
    continue()
  endif()
  file(STRINGS ${root}/${file} database_includes REGEX "^#include <(rocksdb/|libpq-fe\\.h|libpq/)")
  foreach(line IN LISTS database_includes)
    message(SEND_ERROR "${file}: ${line}: only src/store includes a database's headers")
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "layering: ${violations} include(s) against the arrows")
endif()
list(LENGTH rules count)
list(LENGTH known_exceptions exceptions)
message(STATUS "layering: the includes of ${count} layers point only down (${exceptions} known exceptions)")
