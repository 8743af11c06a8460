#!/usr/bin/env bash
# Shows that a change meant to keep every output byte kept it: it dumps
# everything two doctor binaries print for the committed inputs and
# compares the dumps byte for byte.
#
#   scripts/outputs-unchanged.sh BEFORE_BIN AFTER_BIN   dump both, compare
#   scripts/outputs-unchanged.sh dump BIN DIR           dump one binary into DIR
#   scripts/outputs-unchanged.sh compare DIR_A DIR_B    compare two dumps
#
# A dump (TestDumpOutputs in cmd/doctor/e2e, which says what it holds) is
# every fixture of testdata/fixtures laid out as TestScenarios lays it, run
# in every format with and without --verbose, bundled and analyzed, and
# asked `doctor why` of every log in testdata/logs; then `doctor checks`,
# `doctor explain` of every check, `doctor version` and every command's
# --help. Build a binary of a commit with, for example:
#
#   git worktree add /tmp/before <commit> && (cd /tmp/before &&
#     CGO_ENABLED=0 go build -o /tmp/doctor-before ./cmd/doctor)
#
# Exit 0 when the dumps are equal; otherwise diff's output and 1. The test
# lays roots out with chown, so it runs as root, as the fixture tests do.
#
# Two things differ by design from one process to the next, and are
# compared for what they are instead: a fix's verify line names doctor by
# the path it was run as, so each binary is dumped as the same path
# ($stage/doctor); and a bundle's stand-ins are keyed by random bytes drawn
# for that bundle (docs/guarantees.md), so a line of a bundle's files that
# differs must differ only in its stand-ins: REDACTED-<8 hex> keys, and
# values described by StandInLike, which keep each character's class
# (lower, upper, digit) and every other character; and base64 runs of
# 16 characters or more, the fresh private keys that stand in for the
# host's.
set -euo pipefail
cd "$(dirname "$0")/.."

stage=${TMPDIR:-/tmp}/doctor-outputs-unchanged

dump() {
  local bin dir
  bin=$(realpath "$1")
  dir=$(realpath -m "$2")
  rm -rf "$dir"
  mkdir -p "$dir" "$stage"
  install -m 0755 "$bin" "$stage/doctor"
  DOCTOR_LOOPBACK_ONLY=1 DOCTOR_DUMP_BIN="$stage/doctor" DOCTOR_DUMP_DIR="$dir" \
    go test ./cmd/doctor/e2e -run '^TestDumpOutputs$' -count=1 -timeout 30m >&2
  echo "$(find "$dir" -type f | wc -l) outputs of $bin in $dir" >&2
}

# same_but_standins: files $1 and $2 have the same lines, but for stand-ins.
same_but_standins() {
  awk '
    BEGIN { b64 = "[A-Za-z0-9+/]"; for (i = 1; i < 16; i++) b64 = b64 "[A-Za-z0-9+/]"; b64 = b64 "[A-Za-z0-9+/]*=*" }
    function shape(s) {
      # Base64 of 12 bytes or more: the fresh keys a bundle holds for the
      # host'"'"'s private keys (a kubeconfig'"'"'s client-key-data, PEM lines).
      gsub(b64, "B64", s)
      gsub(/REDACTED-[0-9a-f]+/, "REDACTED-h", s)
      gsub(/[a-z]/, "a", s); gsub(/[A-Z]/, "A", s); gsub(/[0-9]/, "0", s)
      return s
    }
    NR == FNR { a[FNR] = $0; n = FNR; next }
    { m = FNR }
    a[FNR] != $0 && shape(a[FNR]) != shape($0) {
      printf "%s:%d differs beyond its stand-ins:\n< %s\n> %s\n", FILENAME, FNR, a[FNR], $0; bad = 1
    }
    END { if (m != n) { printf "%s: %d lines, %d before\n", FILENAME, m, n; bad = 1 }; exit bad }
  ' "$1" "$2"
}

compare() {
  local ok=1 f
  for f in "$1" "$2"; do
    if [ ! -d "$f" ] || [ -z "$(find "$f" -type f -print -quit)" ]; then
      echo "no dump in $f" >&2
      return 1
    fi
  done
  while IFS= read -r f; do
    case $f in
    "Only in "*) echo "$f"; ok=0 ;;
    */bundle) same_but_standins "$1/$f" "$2/$f" || ok=0 ;;
    *) diff "$1/$f" "$2/$f" || ok=0 ;;
    esac
  done < <(diff -rq "$1" "$2" | sed -E "s#^Files $1/(.*) and $2/.* differ\$#\1#")
  if [ $ok = 1 ]; then
    echo "equal: $(find "$1" -type f | wc -l) outputs (bundles up to their keyed stand-ins)" >&2
  else
    return 1
  fi
}

case "${1:-}" in
dump)
  [ $# -eq 3 ] || { echo "usage: $0 dump BIN DIR" >&2; exit 2; }
  dump "$2" "$3"
  ;;
compare)
  [ $# -eq 3 ] || { echo "usage: $0 compare DIR_A DIR_B" >&2; exit 2; }
  compare "$2" "$3"
  ;;
*)
  [ $# -eq 2 ] || { echo "usage: $0 BEFORE_BIN AFTER_BIN | dump BIN DIR | compare DIR_A DIR_B" >&2; exit 2; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  dump "$1" "$work/before"
  dump "$2" "$work/after"
  compare "$work/before" "$work/after"
  ;;
esac
