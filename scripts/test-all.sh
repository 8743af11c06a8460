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
# The live-table test runs doctor in tmux, and the completion test loads
# cobra's bash script, which needs the bash-completion package: install
# what is missing (CI is a fresh Debian machine, as root). An install that
# fails fails the run; the tests themselves fail, never skip, without them.
need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
[ -f /usr/share/bash-completion/bash_completion ] || need+=(bash-completion)
# deploy/ verifies its units with systemd-analyze and its alert rules with
# promtool (Debian's prometheus package); without them those tests fail.
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
# The systemd model's differential tests run the systemd package's own
# /lib/systemd/systemd as PID 1 of private namespaces (util-linux's unshare
# and nsenter) and ask it with systemctl (testkit/realsystemd).
[ -x /lib/systemd/systemd ] || need+=(systemd)
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
# The Docker executor's checks run against a real Docker Engine (Debian's
# docker.io), started by the tests on a socket of their own.
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
# internal/source/sshkey reads keys the real ssh-keygen writes.
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
# Every fix's shell block is checked with shellcheck (testkit/fixproof).
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
# deploy/'s TestImage builds the image (scripts/image.sh) with the docker
# client and the CA bundle it copies in.
command -v docker >/dev/null 2>&1 || need+=(docker.io)
[ -s /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
export DOCTOR_REQUIRE_TOOLS=1
if [ ${#need[@]} -gt 0 ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi
go vet ./...
go vet -tags integration ./...
bash scripts/build-tools.sh
go test -tags integration -count=1 -timeout 30m ./...
# Every fuzz target for a few seconds each, seeded by its committed corpus
# (testdata/fuzz/FuzzX/): a crash or a hang fails the run.
bash scripts/fuzz.sh
