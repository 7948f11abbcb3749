#!/usr/bin/env bash
# setup.sh - install what iogram needs to build, test and run (Debian 12, as root).
# Idempotent: does nothing when every package is present.
set -euo pipefail
pkgs=(
  gcc libc6-dev clang libclang-rt-14-dev pkg-config meson ninja-build
  check libzstd-dev libzmq3-dev libncurses-dev libgtk-3-dev libcairo2-dev
  libaio-dev tmux xvfb xauth strace ltrace fio procps
  libx11-dev libxtst-dev fonts-dejavu-core libxml2-utils
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
