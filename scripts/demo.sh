#!/usr/bin/env bash
# demo.sh - the README's first command: set up, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Until the live dashboard exists: record a synthetic 4-node job, then inspect it.
./build/tests/iogram-synth --nodes 4 --sources-per-node 2 --seconds 120 -o "$tmp/demo.iogr"
./build/proto/iogram info "$tmp/demo.iogr"
echo; echo "== posix.read.size on node001 (log2 bins) =="
./build/proto/iogram export hist "$tmp/demo.iogr" --metric posix.read.size --node node001 --bins log2
echo; echo "== posix.write.bytes per node, first 10 s (bytes/s) =="
./build/proto/iogram export series "$tmp/demo.iogr" --metric posix.write.bytes | head -n 11
