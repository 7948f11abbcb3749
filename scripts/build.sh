#!/usr/bin/env bash
# build.sh - configure (once) and build iogram into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
