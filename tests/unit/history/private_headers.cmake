# Checks that SQLite stays inside parley_history: outside the library's own .cpp files, its
# private headers and its tests, no source file includes sqlite3.h or a private header of the
# library. Run as: cmake -DSOURCE_DIR=<project root> -P private_headers.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "SOURCE_DIR is not set")
endif()

set(private_headers sqlite_database.hpp sqlite_history_writer.hpp sqlite_room_log.hpp history_chunk_reader.hpp
                    sqlite_marker_table.hpp sqlite_setting_table.hpp sqlite_chunk_rewrite.hpp)
list(JOIN private_headers "|" private_alternatives)
string(REPLACE "." "\\." private_alternatives "${private_alternatives}")
set(forbidden "#[ \t]*include[ \t]*(<sqlite3\\.h>|\"rooms/history/(${private_alternatives})\")")

set(files)
foreach(module protocol registry config rooms server tests)
  file(GLOB_RECURSE found ${SOURCE_DIR}/${module}/*.cpp ${SOURCE_DIR}/${module}/*.hpp ${SOURCE_DIR}/${module}/*.h)
  list(APPEND files ${found})
endforeach()

set(offenders)
foreach(path IN LISTS files)
  file(RELATIVE_PATH relative ${SOURCE_DIR} ${path})
  get_filename_component(name ${relative} NAME)
  if(relative MATCHES "^rooms/history/[^/]+\\.cpp$" OR relative MATCHES "^tests/unit/history/")
    continue()
  endif()
  if(relative MATCHES "^rooms/history/[^/]+$" AND name IN_LIST private_headers)
    continue()
  endif()
  file(STRINGS ${path} lines REGEX "${forbidden}")
  foreach(line IN LISTS lines)
    list(APPEND offenders "${relative}: ${line}")
  endforeach()
endforeach()

if(offenders)
  list(JOIN offenders "\n  " listed)
  message(FATAL_ERROR "SQLite is private to parley_history (rooms/history/), but these include it:\n  ${listed}")
endif()
list(LENGTH files count)
message(STATUS "SQLite stays inside parley_history (${count} files checked)")
