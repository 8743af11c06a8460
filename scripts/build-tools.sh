#!/usr/bin/env bash
# build-tools.sh — build the real components the integration tests run
# (kube-apiserver, kubectl, etcd, caddy) from the versions pinned in tools/,
# into ${DOCTOR_TOOLS:-$HOME/.cache/doctor-tools}/bin.
#
# Needs only Go and the Go module proxy. A binary is rebuilt only when its
# stamp file (bin/.<name>.stamp) does not match the pinned module version,
# the module's go.sum and the Go version, so a warm run takes seconds.
# The first kube-apiserver build takes ~5 minutes on 2 cores.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tools_dir=${DOCTOR_TOOLS:-$HOME/.cache/doctor-tools}
bin=$tools_dir/bin
mkdir -p "$bin"

# The tools modules are standalone; a go.work elsewhere must not pull them in.
export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"

go_version=$(go env GOVERSION)
start_all=$SECONDS
built=() skipped=()

# build NAME MODULE_DIR PINNED_MODULE PACKAGE [extra go build args...]
build() {
	local name=$1 dir=$root/tools/$2 mod=$3 pkg=$4
	shift 4
	local version sum flags stamp want
	version=$(cd "$dir" && go list -m -f '{{.Version}}' "$mod")
	sum=$(sha256sum "$dir/go.sum" | cut -c1-16)
	flags=$(printf '%s\n' "$@" | sha256sum | cut -c1-16)
	stamp=$bin/.$name.stamp
	want="$mod@$version go.sum:$sum flags:$flags $go_version"
	if [[ -x $bin/$name && -f $stamp && $(<"$stamp") == "$want" ]]; then
		skipped+=("$name ($version)")
		return
	fi
	echo "build-tools: building $name $version ..."
	local t0=$SECONDS
	# Build to a temp name and rename, so an interrupted build never leaves
	# a half-written binary that a later run would trust.
	(cd "$dir" && go build -trimpath "$@" -o "$bin/.$name.tmp" "$pkg")
	mv -f "$bin/.$name.tmp" "$bin/$name"
	printf '%s\n' "$want" >"$stamp"
	echo "build-tools: built $name $version in $((SECONDS - t0))s"
	built+=("$name ($version, $((SECONDS - t0))s)")
}

# Release builds stamp the version via ldflags; without it kube-apiserver
# reports v0.0.0-master, which /version readers (doctor) would see.
k8s_version=$(cd "$root/tools" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
k8s_minor=$(echo "$k8s_version" | cut -d. -f2)
k8s_ldflags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	k8s_ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$k8s_minor -X $p.gitTreeState=clean"
done

build kube-apiserver . k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-apiserver -ldflags "$k8s_ldflags"
build kubectl . k8s.io/kubernetes k8s.io/kubernetes/cmd/kubectl -ldflags "$k8s_ldflags"
build etcd etcd go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3
# Built as a dependency, caddy cannot find its own version in the build
# info ("caddy version" says unknown); CustomVersion is its hook for that.
build caddy caddy github.com/caddyserver/caddy/v2 github.com/caddyserver/caddy/v2/cmd/caddy \
	-ldflags "-X github.com/caddyserver/caddy/v2.CustomVersion=$(cd "$root/tools/caddy" && go list -m -f '{{.Version}}' github.com/caddyserver/caddy/v2)"

echo "build-tools: bin=$bin"
if ((${#built[@]})); then printf 'build-tools: built      %s\n' "${built[@]}"; fi
if ((${#skipped[@]})); then printf 'build-tools: up to date %s\n' "${skipped[@]}"; fi
echo "build-tools: done in $((SECONDS - start_all))s"
