#!/usr/bin/env bash
# Builds doctor's container image (deploy/image/Dockerfile): FROM scratch,
# the static binary for GOARCH (this machine's by default) stamped with its
# version, the CA certificates, and a non-root user 65532. The Docker
# daemon is DOCKER_HOST's (the local one by default).
#
#   bash scripts/image.sh             # builds IMAGE:VERSION, prints it
#   bash scripts/image.sh --push      # and pushes it
#
# IMAGE defaults to registry.example.invalid/doctor (set it to your
# registry: deploy/kubernetes/doctor.yaml's image names the same),
# VERSION to `git describe --tags --always --dirty`, CA_BUNDLE to
# /etc/ssl/certs/ca-certificates.crt (Debian's ca-certificates).
set -euo pipefail
cd "$(dirname "$0")/.."
push=false
[ "${1:-}" = "--push" ] && push=true
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}
image=${IMAGE:-registry.example.invalid/doctor}:$version
ca=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
if [ ! -s "$ca" ]; then
  echo "image.sh: no CA bundle at $ca (apt-get install ca-certificates, or set CA_BUNDLE)" >&2
  exit 1
fi
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 GOOS=linux GOARCH=${GOARCH:-$(go env GOARCH)} go build -trimpath \
  -ldflags "-s -w -X github.com/socialwebcomputer/doctor/cmd/doctor/cli.Version=$version" \
  -o "$ctx/doctor" ./cmd/doctor
cp deploy/image/Dockerfile deploy/image/passwd deploy/image/group "$ctx/"
cp "$ca" "$ctx/ca-certificates.crt"
docker build --quiet --tag "$image" "$ctx" >&2
if $push; then
  docker push "$image" >&2
fi
echo "$image"
