package symptom_test

import (
	"slices"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/symptom"
)

// realLines are error lines as operators paste them: from a GitLab job log
// (colours and section markers included), from `journalctl -u
// gitlab-runner` (its prefix included), from the runner's docs. Each must
// name its check, whatever else it names.
var realLines = []struct{ line, check string }{
	{"\x1b[31;1mERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable\x1b[0;m", "runner-kubeconfig-env"},
	{"\x1b[0Ksection_start:1764590400:prepare_executor\r\x1b[0K\x1b[31;1mERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable\x1b[0;m", "runner-service"},
	{`ERROR: Job failed: getting Kubernetes config: error loading config file "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml": open /etc/gitlab-runner/tenant-ci/kubeconfig.yaml: permission denied`, "kubeconfig-file"},
	{`ERROR: Job failed: getting Kubernetes config: invalid configuration: [context was not found for specified context: tenant-ci, cluster has no server defined]`, "kubeconfig-file"},
	{"ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth", "cluster-override"},
	{"Dec 01 09:00:07 runner-host.example.invalid gitlab-runner[812]: \x1b[31;1mFATAL: Service run failed                         \x1b[0;m  \x1b[31;1merror\x1b[0;m=decoding configuration file: toml: line 1 (last key \"concurrent\"): incompatible types: TOML value has type string; destination has type integer", "config-decode"},
	{"Dec 01 09:00:07 runner-host.example.invalid gitlab-runner[812]: FATAL: Service run failed                           error=decoding configuration file: toml: line 3: expected end of table array name delimiter ']', but got '\\n' instead", "runner-process"},
	{`time="2026-12-01T09:00:07.812525816Z" level=fatal msg="Service run failed" error="decoding configuration file: toml: line 1 (last key \"concurrent\"): incompatible types: TOML value has type string; destination has type integer"`, "config-decode"},
	{"FATAL: Service run failed   error=toml: cannot load TOML value of type int64 into a Go float", "config-decode"},
	{"ERROR: Failed to load config stat /etc/gitlab-runner/config.toml: no such file or directory  builds=0 max_builds=1", "config-decode"},
	{"FATAL: Service run failed                           error=loading configuration for k8s runner: compiling monitoring sections: compiling job_queuing_durations: entry 1: periods: missing field(s)", "config-decode"},
	{"2 unknown key(s) found in /etc/gitlab-runner/config.toml:", "config-unknown-keys"},
	{"  unknown key: runners.kubernetes.image_pull_policy", "config-unknown-keys"},
	{"ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "pending-no-node"},
	{"ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "config-lint"},
	{"\x1b[31;1mJob's log exceeded limit of 4194304 bytes.\x1b[0;m", "config-lint"},
	{"Dec 01 09:00:07 runner-host.example.invalid gitlab-runner[812]: WARNING: CONFIGURATION: Long polling issues detected.", "config-lint"},
	{"\tUnschedulable: \"0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.\"", "pending-unschedulable"},
	{"\x1b[0;33mWARNING: Event retrieved from the cluster: 0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.\x1b[0;m", "pending-unschedulable"},
	{`ERROR: Job failed: prepare environment: waiting for pod running: image pull failed: Back-off pulling image "registry.example.invalid/ci/golang:1.24". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "image-pull"},
	{`ERROR: Job failed: prepare environment: waiting for pod running: image pull failed: rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/golang:1.99": not found`, "image-pull"},
	{`WARNING: Event retrieved from the cluster: Failed to pull image "registry.example.invalid/ci/golang:1.24": dial tcp: lookup registry.example.invalid: no such host`, "image-pull"},
	{"fatal: unable to access 'https://gitlab-ci-token:[MASKED]@gitlab.example.invalid:8443/group/project.git/': Could not resolve host: gitlab.example.invalid", "node-local-dns"},
	{"dial tcp: lookup gitlab.example.invalid on 169.254.20.10:53: read udp 10.0.0.5:41234->169.254.20.10:53: i/o timeout", "node-local-dns"},
	{`ERROR: Job failed (system failure): prepare environment: setting up build pod: namespaces "gitlab-runner" not found. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "namespace"},
	{`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods is forbidden: User "did:plc:ewvi7nxzyoun6zhxrhs64oiz" cannot create resource "pods" in API group "" in the namespace "gitlab-runner". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "runner-rbac"},
	{`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods is forbidden: User "did:plc:ewvi7nxzyoun6zhxrhs64oiz" cannot create resource "pods" in API group "" in the namespace "gitlab-runner". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "owner-rbac"},
	{`ERROR: Job failed (system failure): secrets is forbidden: User "system:serviceaccount:gitlab:default"`, "runner-rbac"},
	{"ERROR: Job failed (system failure): prepare environment: setting up credentials: the server has asked for the client to provide credentials (post secrets). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "api-auth"},
	{"ERROR: Job failed (system failure): prepare environment: setting up credentials: the server has asked for the client to provide credentials (post secrets). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "cert-expiry"},
	{"ERROR: Job failed (system failure): prepare environment: setting up credentials: Post https://172.21.0.1:443/api/v1/namespaces/<KUBERNETES_NAMESPACE>/secrets: net/http: TLS handshake timeout. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "api-auth"},
	{"Job failed (system failure): prepare environment: setting up credentials: Timeout: request did not complete within requested timeout", "api-auth"},
	{`Error: Job failed (system failure): prepare environment: waiting for pod running: Get "https://xx.xx.xx.x:443/api/v1/namespaces/gitlab-runner/runner-0001": dial tcp xx.xx.xx.x:443 connect: connection refused`, "api-auth"},
	{"Dec 01 09:03:12 runner-host.example.invalid gitlab-runner[812]: \x1b[31;1mERROR: Checking for jobs... forbidden               \x1b[0;m  \x1b[31;1mrunner\x1b[0;m=Zx8y1Abc \x1b[31;1mstatus\x1b[0;m=403 Forbidden", "runner-token"},
	{"ERROR: Verifying runner... is removed                runner=Zx8y1Abc status=403 Forbidden", "runner-token"},
	{"Verifying runner... is not valid                    runner=Zx8y1Abc", "runner-token"},
	{`ERROR: Runner "https://gitlab.example.invalidZx8y1Abc" is unhealthy and will be disabled for 1h0m0s seconds!  unhealthy_requests=3 unhealthy_requests_limit=3`, "runner-token"},
	{`ERROR: Runner "https://gitlab.example.invalidZx8y1Abc" is unhealthy and will be disabled for 1h0m0s seconds!  unhealthy_requests=3 unhealthy_requests_limit=3`, "gitlab-reachability"},
	{`WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post "https://gitlab.example.invalid/api/v4/jobs/request": dial tcp 127.0.0.1:8443: connect: connection refused`, "gitlab-reachability"},
	{"ERROR: Registering runner... failed: Post https://hostname.tld/api/v4/runners: x509: certificate signed by unknown authority", "gitlab-reachability"},
	{"fatal: unable to access 'https://gitlab.example.com/group/project.git/': SSL certificate problem: unable to get local issuer certificate", "gitlab-reachability"},
	{"fatal: unable to access 'https://gitlab.example.invalid:8443/group/project.git/': Failed to connect to gitlab.example.invalid port 8443 after 130 ms: Couldn't connect to server", "gitlab-reachability"},
	{"Starting pause pod manager                          runner=Zx8y1Abc", "scale-to-zero"},
	{"ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: unable to read error from server response. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "exec-upgrade"},
}

func TestRealErrorLinesNameTheirCheck(t *testing.T) {
	if len(realLines) < 30 {
		t.Fatalf("%d lines: the table covers 30 or more", len(realLines))
	}
	m := matcher(t)
	for _, tc := range realLines {
		if got := m.Line(symptom.Clean(tc.line)); !slices.Contains(got, tc.check) {
			t.Errorf("%q names %v, want %s among them", tc.line, got, tc.check)
		}
	}
}
