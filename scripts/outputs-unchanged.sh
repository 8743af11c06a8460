#!/usr/bin/env bash
# Shows that a change meant to keep every output byte kept it: it dumps
# everything two doctor binaries print for the committed inputs and
# compares the dumps byte for byte.
#
#   scripts/outputs-unchanged.sh BEFORE_BIN AFTER_BIN   dump both, compare
#   scripts/outputs-unchanged.sh dump BIN DIR           dump one binary into DIR
#   scripts/outputs-unchanged.sh compare DIR_A DIR_B    compare two dumps
#
# A dump (TestDumpOutputs in cmd/doctor/cli, which says what it holds) is
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
set -euo pipefail
cd "$(dirname "$0")/.."

dump() {
  local bin dir
  bin=$(realpath "$1")
  dir=$(realpath -m "$2")
  rm -rf "$dir"
  mkdir -p "$dir"
  DOCTOR_LOOPBACK_ONLY=1 DOCTOR_DUMP_BIN="$bin" DOCTOR_DUMP_DIR="$dir" \
    go test ./cmd/doctor/cli -run '^TestDumpOutputs$' -count=1 -timeout 30m >&2
  echo "$(find "$dir" -type f | wc -l) outputs of $bin in $dir" >&2
}

compare() {
  if diff -r "$1" "$2"; then
    echo "equal: $(find "$1" -type f | wc -l) outputs" >&2
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
