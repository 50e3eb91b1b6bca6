#!/usr/bin/env bash
# Builds parleyd for release and installs it, prefix /usr, into a staging folder:
#   STAGE/usr/bin/parleyd, STAGE/etc/parley/parley.toml, STAGE/usr/lib/systemd/system/...
# The Docker image's build stage runs this, and so does .ci/check-packaging, so what CI checks
# is what the image ships.
#
#   docker/build-release.sh STAGE_DIR [BUILD_DIR]    (BUILD_DIR defaults to ./build-release)
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
stage_dir="${1:?usage: $0 STAGE_DIR [BUILD_DIR]}"
build_dir="${2:-$source_dir/build-release}"
mkdir -p "$stage_dir"
stage_dir="$(cd "$stage_dir" && pwd)"  # DESTDIR must not depend on the working folder

bash "$source_dir/.ci/install-deps" build
cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DPARLEY_BUILD_TESTS=OFF \
  -DCMAKE_INSTALL_PREFIX=/usr
cmake --build "$build_dir" -j"$(nproc)" --target parleyd
DESTDIR="$stage_dir" cmake --install "$build_dir" --prefix /usr
