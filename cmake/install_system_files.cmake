# Runs inside `cmake --install` (see install.cmake): places <sysconfdir>/parley/parley.toml and
# parleyd.service for the prefix in force now. DESTDIR is applied by file(INSTALL).

string(REGEX REPLACE "/+$" "" parley_prefix "${CMAKE_INSTALL_PREFIX}")  # "/" becomes ""

function(parley_full_dir out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${parley_prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

parley_full_dir(parley_full_bindir "${parley_bindir}")
parley_full_dir(parley_full_docdir "${parley_docdir}")

# The same rule as GNUInstallDirs: /etc for the prefixes / and /usr, /etc/opt/... for /opt/...,
# <prefix>/etc otherwise.
if(IS_ABSOLUTE "${parley_sysconfdir}")
  set(parley_etc "${parley_sysconfdir}")
elseif(parley_prefix STREQUAL "" OR parley_prefix STREQUAL "/usr")
  set(parley_etc "/${parley_sysconfdir}")
elseif(parley_prefix MATCHES "^/opt/" AND NOT parley_prefix MATCHES "^/opt/homebrew/")
  set(parley_etc "/${parley_sysconfdir}${parley_prefix}")
else()
  set(parley_etc "${parley_prefix}/${parley_sysconfdir}")
endif()

if(parley_unitdir STREQUAL "")
  set(parley_unitdir "${parley_prefix}/lib/systemd/system")
endif()

# The config: replaced when it is the sample of this or the previous install, kept when the
# admin changed it (as a package manager treats a changed conffile). The new sample goes to the
# doc folder for comparison.
set(parley_sample "${parley_source_dir}/config/parley.toml")
set(parley_config "$ENV{DESTDIR}${parley_etc}/parley/parley.toml")
set(parley_previous_sample "$ENV{DESTDIR}${parley_full_docdir}/parley.toml.sample")
set(parley_keep_config FALSE)
if(EXISTS "${parley_config}")
  file(SHA256 "${parley_config}" parley_hash)
  file(SHA256 "${parley_sample}" parley_sample_hash)
  set(parley_previous_hash "")
  if(EXISTS "${parley_previous_sample}")
    file(SHA256 "${parley_previous_sample}" parley_previous_hash)
  endif()
  if(NOT parley_hash STREQUAL parley_sample_hash AND NOT parley_hash STREQUAL parley_previous_hash)
    set(parley_keep_config TRUE)
  endif()
endif()
if(parley_keep_config)
  message(STATUS "Keeping: ${parley_config} (locally changed; the new sample is "
                 "${parley_full_docdir}/parley.toml.sample)")
else()
  file(INSTALL DESTINATION "${parley_etc}/parley" TYPE FILE FILES "${parley_sample}")
endif()

# The unit, with the paths of this install.
file(READ "${parley_source_dir}/config/parleyd.service" parley_unit)
string(REPLACE "/usr/bin/parleyd" "${parley_full_bindir}/parleyd" parley_unit "${parley_unit}")
string(REPLACE "/etc/parley/parley.toml" "${parley_etc}/parley/parley.toml" parley_unit "${parley_unit}")
string(REPLACE "/usr/share/doc/parley/" "${parley_full_docdir}/" parley_unit "${parley_unit}")
file(WRITE "${parley_work_dir}/parleyd.service" "${parley_unit}")
file(INSTALL DESTINATION "${parley_unitdir}" TYPE FILE FILES "${parley_work_dir}/parleyd.service")
