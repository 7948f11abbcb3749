#!/usr/bin/env bash
# test.sh - the README's second command: set up, build, run every test: the
# suite, the suite again under ASan+UBSan, and each fuzzer for a bounded time.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
fuzz_secs=${IOGRAM_FUZZ_SECONDS:-60}
pass=0; fail=0
failed=$(mktemp); trap 'rm -f "$failed"' EXIT
count() { # count results of the last `meson test` in $1; keep what failed
  local log="$1/meson-logs/testlog.json" ok bad
  [ -f "$log" ] || { fail=$((fail + 1)); echo "--- $1: no test log" >>"$failed"; return; }
  read -r ok bad < <(python3 - "$1" "$log" 3>>"$failed" <<'PY'
import json, os, sys
ok = bad = 0
with os.fdopen(3, "w") as out:
    for line in open(sys.argv[2]):
        r = json.loads(line)
        if r.get("result") == "OK":
            ok += 1
        elif r.get("result") in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
            bad += 1
            text = (r.get("stdout") or "") + (r.get("stderr") or "")
            print(f"--- {sys.argv[1]}: {r['name']} {r['result']} after {r.get('duration', 0):.1f} s", file=out)
            print("\n".join(text.splitlines()[-25:]), file=out)
print(ok, bad)
PY
  )
  pass=$((pass + ${ok:-0})); fail=$((fail + ${bad:-1}))
}
run_suite() { # dir, meson setup args...
  local dir=$1; shift
  { [ -f "$dir/build.ninja" ] || meson setup "$dir" "$@"; } && ninja -C "$dir" || { fail=$((fail + 1)); echo "--- $dir: build failed" >>"$failed"; return; }
  meson test -C "$dir" --print-errorlogs --num-processes 2
  count "$dir"
}
echo "== build and test =="
run_suite build
echo "== ASan + UBSan =="
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dgtk=disabled
grep -h "not registered under ASan" build-asan/meson-logs/testlog.txt 2>/dev/null | sort -u
echo "== fuzzing (${fuzz_secs} s per target) =="
if { [ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false -Dgtk=disabled; } \
   && ninja -C build-fuzz; then
  for f in build-fuzz/fuzz/fuzz_*; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    name=$(basename "$f"); corpus="fuzz/corpus_${name#fuzz_}"
    work=$(mktemp -d); [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
    if "$f" -max_total_time="$fuzz_secs" -rss_limit_mb=2048 -timeout=10 "$work" \
         >"build-fuzz/$name.log" 2>&1; then
      echo "fuzz: $name ok ($(grep -o 'Done [0-9]* runs in [0-9]* second' "build-fuzz/$name.log" | tail -1)s)"
      pass=$((pass + 1))
    else
      echo "fuzz: $name FAILED"; tail -n 40 "build-fuzz/$name.log"; fail=$((fail + 1))
      { echo "--- fuzz: $name FAILED"; tail -n 25 "build-fuzz/$name.log"; } >>"$failed"
    fi
    rm -rf "$work"
  done
else
  fail=$((fail + 1)); echo "--- build-fuzz: build failed" >>"$failed"
fi
echo
# last, so that a log cut to its tail still names what failed and why
[ -s "$failed" ] && { echo "== what failed =="; cat "$failed"; echo; }
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
