#!/usr/bin/env bash
# run.sh — doctor's benchmark: doctor run against the guide's manual runbook
# (bench/runbook.sh) on a real loopback etcd + kube-apiserver, then doctor at
# 10,000 pods and 1,000 nodes (wall time, peak RSS, API requests from the
# audit log, CPU and allocation profiles), N runners, doctor trace's delay,
# blackholed endpoints, and round trips through a latency-injecting proxy
# at 0, 50 and 150 ms RTT (TestBenchLatency). Takes ~9 minutes on 2 cores.
#
#   bash bench/run.sh            # log: $DOCTOR_BENCH_LOG (default /tmp/doctor-bench-<time>.log)
#
# Needs the tools of scripts/build-tools.sh (built here if missing) and
# hyperfine (installed with apt-get when missing and run as root; without it
# the benchmark alternates runs itself). Run it on an otherwise idle machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
tools=${DOCTOR_TOOLS:-$HOME/.cache/doctor-tools}
log=${DOCTOR_BENCH_LOG:-/tmp/doctor-bench-$(date +%Y%m%dT%H%M%S).log}

for b in etcd kube-apiserver kubectl; do
	[[ -x $tools/bin/$b ]] || bash scripts/build-tools.sh
done
if ! command -v hyperfine >/dev/null; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null || true
	fi
	command -v hyperfine >/dev/null || echo "run.sh: no hyperfine; alternating runs instead" >&2
fi

{
	echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty tree)')"
	echo "nproc: $(nproc)   kernel: $(uname -r)   loadavg: $(cut -d" " -f1-3 /proc/loadavg)"
	free -h
	go version
	"$tools/bin/kube-apiserver" --version
	"$tools/bin/etcd" --version | sed -n 1p
	"$tools/bin/kubectl" version --client | sed -n 1p
	command -v hyperfine >/dev/null && hyperfine --version
	echo
} | tee "$log"

export DOCTOR_BENCH=1 DOCTOR_LOOPBACK_ONLY=1
go test -tags integration -run 'TestBench|TestBlackhole' -skip 'TestBenchScale' -v -count=1 -timeout 30m ./bench/ 2>&1 | tee -a "$log"
# Issue 24's 1k to 60k pods (about 15 minutes more, most of it growing the
# cluster): DOCTOR_BENCH_SCALE=1, with DOCTOR_BENCH_BEFORE=<binary> to pair.
if [[ ${DOCTOR_BENCH_SCALE:-} == 1 ]]; then
	go test -tags integration -run 'TestBenchScale' -v -count=1 -timeout 60m ./bench/ 2>&1 | tee -a "$log"
fi
echo "run.sh: log in $log"
