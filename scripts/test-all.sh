#!/usr/bin/env bash
# The one command that runs every test, as README.md says and CI runs it:
# builds the real components (kube-apiserver, etcd, kubectl, Caddy) into the
# tool cache, then runs the unit, fixture, fuzz-seed and integration tests.
# A component that cannot be built or started is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every dial doctor makes goes through checks.Env.Dial; this confines it to
# loopback for the whole run, so no test can reach a production default.
export DOCTOR_LOOPBACK_ONLY=1

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './tools/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
go vet -tags integration ./...
bash scripts/build-tools.sh
go test -tags integration -count=1 -timeout 30m ./...
