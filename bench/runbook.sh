#!/usr/bin/env bash
# runbook.sh — the manual verification of the runner-gateway-cluster guide
# (section "The kubeconfig"), as an operator types it: 8 kubectl calls, in
# order. The benchmark times it against `doctor run` on the same cluster.
#
#   KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml bash bench/runbook.sh
#
# KUBECTL picks the binary. The default is the plain kubectl that
# scripts/build-tools.sh builds, not the machine's cloud-SDK wrapper in PATH,
# whose own start-up cost would flatter doctor.
#
# Not `set -e`: `kubectl auth can-i` exits 1 for "no", which is an answer the
# operator reads, not a failure. Any other failure is counted and the script
# exits 1 at the end, after every call has run, as a person would go on.
set -uo pipefail

: "${KUBECONFIG:?set KUBECONFIG to the kubeconfig of the runner}"
export KUBECONFIG
kubectl=${KUBECTL:-$HOME/.cache/doctor-tools/bin/kubectl}
ns=${RUNNER_NAMESPACE:-gitlab-runner}
failed=0

run() {
	"$kubectl" "$@" || {
		echo "runbook: kubectl $* failed (exit $?)" >&2
		failed=$((failed + 1))
	}
}

# can_i prints kubectl's yes/no; only an answer other than those (an error on
# stderr, exit 1 too) counts as a failure.
can_i() {
	local answer
	answer=$("$kubectl" auth can-i "$@")
	echo "$answer"
	case $answer in
	yes | no) ;;
	*)
		echo "runbook: kubectl auth can-i $* gave no answer" >&2
		failed=$((failed + 1))
		;;
	esac
}

run config view --minify
can_i create pods -n "$ns"
can_i create pods/exec -n "$ns"
run get nodes
run get ns "$ns"
run get pods -A
run -n kube-system get pods -l app.kubernetes.io/name=socialweb-node-dns -o wide
run get priorityclass

if ((failed > 0)); then
	echo "runbook: $failed of 8 calls failed" >&2
	exit 1
fi
