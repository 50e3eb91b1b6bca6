# The Debian package parleyd_<version>_<arch>.deb (CPack's DEB generator): `cpack` in the build
# folder, or `cmake --build build --target package` (which builds everything first). It holds
# exactly what `cmake --install --prefix /usr` installs (cmake/install.cmake, component parleyd):
#   /usr/bin/parleyd, /etc/parley/parley.toml (a conffile), the unit
#   /usr/lib/systemd/system/parleyd.service, /usr/share/doc/parley/
# plus the maintainer scripts of packaging/deb/. .ci/check-deb-package builds, installs and
# removes it; docs/operations.md, "Debian package", is the admin's side.
#
# What the package leaves out on purpose: /var/lib/parley. The unit runs parleyd with
# DynamicUser=yes and StateDirectory=parley, so systemd makes that directory at start, owned by
# the uid it allocates, and keeps it as /var/lib/private/parley behind a /var/lib/parley symlink.
# Were the package to ship the directory, dpkg would own a path that systemd turns into a
# symlink (and chowns), and an upgrade or a removal would fight systemd over it. Left to
# systemd, the history survives removal and reinstalls as the admin's data.

find_program(PARLEY_DPKG dpkg)
if(NOT PARLEY_DPKG)
  message(STATUS "dpkg not found: no Debian package target")
  return()
endif()
execute_process(COMMAND ${PARLEY_DPKG} --print-architecture
                OUTPUT_VARIABLE parley_deb_arch OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME parleyd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR parley)
set(CPACK_PACKAGE_CONTACT "parley <dev@parley.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "WebSocket chat server daemon")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "parleyd serves browsers and other WebSocket clients that log in with a name, join rooms,\n\
chat, send direct messages and see who is there. It keeps room history in SQLite, reloads its\n\
TOML configuration on SIGHUP and runs as a hardened systemd service.")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${parley_deb_arch})
set(CPACK_DEBIAN_FILE_NAME "parleyd_${PROJECT_VERSION}_${parley_deb_arch}.deb")
# Depends: from the libraries the binary links, as dpkg-shlibdeps names their packages
# (needs dpkg-dev and file, which .ci/install-deps installs).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)

# Only the component parleyd, from this build, installed under DESTDIR with the prefix /usr
# whatever CMAKE_INSTALL_PREFIX the build was configured with. DESTDIR (not a staging prefix)
# because the install script of cmake/install_system_files.cmake derives /etc and the unit's
# paths from the prefix: with a staging prefix they would name the staging folder.
set(CPACK_INSTALL_CMAKE_PROJECTS "${PROJECT_BINARY_DIR};parley;parleyd;/")
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

# The config is a conffile: dpkg keeps an admin's edits across upgrades (the new version goes
# beside it as parley.toml.dpkg-dist) and removes it only on purge.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/deb/conffiles
    ${PROJECT_SOURCE_DIR}/packaging/deb/postinst
    ${PROJECT_SOURCE_DIR}/packaging/deb/prerm
    ${PROJECT_SOURCE_DIR}/packaging/deb/postrm)
# Control files with the modes Debian expects (0644 conffiles, 0755 scripts), not the checkout's.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
