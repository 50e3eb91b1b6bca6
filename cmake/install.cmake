# What `cmake --install` puts where (see docs/operations.md):
#   <prefix>/bin/parleyd
#   <sysconfdir>/parley/parley.toml           the sample config; an edited one is kept
#   <prefix>/lib/systemd/system/parleyd.service
#   <prefix>/share/doc/parley/                parley.toml.sample, operations.md
# With --prefix /usr the config goes to /etc/parley. Tests, benchmarks and the load generator
# are never installed. Every rule here belongs to the component parleyd, the only one the
# Debian package installs (cmake/packaging.cmake), so no later install() elsewhere can slip
# into the package unnoticed; a plain `cmake --install` installs all components.
include(GNUInstallDirs)

set(PARLEY_SYSTEMD_UNIT_DIR "" CACHE PATH
    "Where to install parleyd.service (empty: <install prefix>/lib/systemd/system)")

install(TARGETS parleyd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT parleyd)

# The config file and the unit depend on the prefix in force when installing, which
# `cmake --install --prefix` may change after configuring, so they are placed by a script that
# runs at install time. It keeps the unit in the source tree a literal, valid unit for the
# prefix /usr and rewrites only its paths. It runs before the doc folder is updated, so it can
# still see the sample of the previous install.
install(CODE "
set(parley_source_dir [[${PROJECT_SOURCE_DIR}]])
set(parley_work_dir [[${PROJECT_BINARY_DIR}/install-files]])
set(parley_bindir [[${CMAKE_INSTALL_BINDIR}]])
set(parley_sysconfdir [[${CMAKE_INSTALL_SYSCONFDIR}]])
set(parley_docdir [[${CMAKE_INSTALL_DOCDIR}]])
set(parley_unitdir [[${PARLEY_SYSTEMD_UNIT_DIR}]])
include([[${CMAKE_CURRENT_LIST_DIR}/install_system_files.cmake]])
" COMPONENT parleyd)

install(FILES ${PROJECT_SOURCE_DIR}/config/parley.toml
        DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME parley.toml.sample COMPONENT parleyd)
install(FILES ${PROJECT_SOURCE_DIR}/docs/operations.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT parleyd)
