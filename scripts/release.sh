#!/usr/bin/env bash
# Builds doctor's release binaries: static (CGO_ENABLED=0) for linux/amd64
# and linux/arm64, each stamped with its version (`doctor version` prints
# it), and SHA256SUMS beside them.
#
#   bash scripts/release.sh [DIR]       # DIR defaults to dist/
#   VERSION=v1.2.3 bash scripts/release.sh
#
# VERSION defaults to `git describe --tags --always --dirty`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}
mkdir -p "$out"
for arch in amd64 arm64; do
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath \
    -ldflags "-s -w -X github.com/socialwebcomputer/doctor/cmd/doctor/cli.Version=$version" \
    -o "$out/doctor-linux-$arch" ./cmd/doctor
done
(cd "$out" && sha256sum doctor-linux-amd64 doctor-linux-arm64 > SHA256SUMS)
echo "$out: doctor $version for linux/amd64 and linux/arm64, SHA256SUMS"
