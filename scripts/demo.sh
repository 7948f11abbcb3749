#!/usr/bin/env bash
# demo.sh - the README's first command: set up, build, and open the live
# dashboard on the built-in demo (five workers, each its own node, doing real
# file I/O under the interposer in a temporary directory). q quits.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec ./build/viewer-tui/iogram-top --demo
