#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time each (CI calls it
# from scripts/test-all.sh). Targets are found, not listed: every package
# with a `func Fuzz…` in a test file is asked for its targets with
# `go test -list`, so a new target is fuzzed without touching this script.
# Each one's committed corpus (testdata/fuzz/FuzzX/) seeds it. A crash, a
# failed assertion or a hang (the per-target -timeout) fails the run, after
# every target has had its turn; the input that failed is written to the
# package's testdata/fuzz/FuzzX/ by go test, which prints how to re-run it.
#
#   FUZZTIME=5s      how long each target is fuzzed
#   FUZZSLOWTIME=60s the one longer turn of a target whose corpus outlasted
#                    FUZZTIME before fuzzing began (see below)
#   FUZZPARALLEL=2   fuzzing workers per target (the machine has 2 CPUs)
#   FUZZ_ONLY=regex  fuzz only the targets whose name matches
set -euo pipefail
cd "$(dirname "$0")/.."
export DOCTOR_LOOPBACK_ONLY=1
fuzztime=${FUZZTIME:-5s}
parallel=${FUZZPARALLEL:-2}
only=${FUZZ_ONLY:-.}

# Packages whose untagged test files define fuzz targets (an integration-
# tagged file is not built here, so it cannot hold one).
mapfile -t pkgs < <(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
  grep -v -e '^./tools/' -e '/testdata/' |
  xargs grep -L '^//go:build' |
  xargs -n1 dirname | sort -u)
if [ ${#pkgs[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzz targets found" >&2
  exit 1
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
fuzz() { go test -run '^$' -fuzz "^${2}\$" -fuzztime "$3" -parallel "$parallel" -timeout 5m "$1" >"$log" 2>&1; }
slowtime=${FUZZSLOWTIME:-60s}
failed=()
count=0
start=$SECONDS
for pkg in "${pkgs[@]}"; do
  mapfile -t targets < <(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' | grep -E -- "$only" || true)
  for t in "${targets[@]}"; do
    count=$((count + 1))
    t0=$SECONDS
    ok=0
    fuzz "$pkg" "$t" "$fuzztime" && ok=1
    # go test reports "context deadline exceeded" when -fuzztime ends while
    # it still runs the corpus for its baseline coverage (a target whose
    # every input is a whole doctor run, on a busy machine): no input
    # failed, so the target gets one longer turn rather than a pass.
    if [ $ok = 0 ] && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
      echo "fuzz      $pkg $t: baseline coverage outlasted $fuzztime; again for $slowtime"
      fuzz "$pkg" "$t" "$slowtime" && ok=1
    fi
    if [ $ok = 1 ]; then
      echo "fuzz ok   $pkg $t ($((SECONDS - t0))s, $(grep -o 'execs: [0-9]*' "$log" | tail -1))"
    else
      echo "fuzz FAIL $pkg $t ($((SECONDS - t0))s):"
      # sed reads to the end: head would stop the pipe early and pipefail would
      # end the script with SIGPIPE (141) before the other targets ran.
      grep -v '^fuzz: elapsed' "$log" | sed -n '1,60p'
      failed+=("$pkg $t")
    fi
  done
done
echo "fuzz.sh: $count targets in $((SECONDS - start))s, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
if [ "$count" -eq 0 ]; then
  echo "fuzz.sh: no target matched FUZZ_ONLY=$only" >&2
  exit 1
fi
