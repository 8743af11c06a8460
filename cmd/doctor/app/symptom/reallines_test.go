package symptom_test

import (
	"slices"
	"testing"

	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
)

// realLines are error lines as operators paste them: from a GitLab job log
// (colours and section markers included), from `journalctl -u
// gitlab-runner` (its prefix included), from the runner's docs. Each must
// name its check, whatever else it names.
//
// A line listed twice, once with each check, names both on purpose: the
// KUBERNETES_MASTER line (no kubeconfig in the service's environment, or
// none readable: runner-service, runner-kubeconfig-env, kubeconfig-file),
// "Service run failed" (the process stops because its config does not
// decode: runner-process, config-decode), "timed out waiting for pod to
// start" (no node, or a poll_timeout too short: pending-no-node,
// config-lint), "is forbidden: User" (the runner's Role or the one who
// grants it: runner-rbac, owner-rbac), "provide credentials" (a rejected
// or expired certificate: api-auth, cert-expiry), "is unhealthy" (GitLab
// unreachable or the token refused: gitlab-reachability, runner-token).
// Lines that name more than their pairs say so beside them.
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
	{"\x1b[31;1mERROR: Job failed (system failure): prepare environment: setting up build pod: pods \"runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq\" is forbidden: exceeded quota: compute, requested: limits.cpu=4, used: limits.cpu=14, limited: limits.cpu=16. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information\x1b[0;m", "namespace-quota"},
	{`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: maximum cpu usage per Container is 2, but limit is 4. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "namespace-quota"},
	{`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: error looking up service account gitlab-runner/ci-builder: serviceaccount "ci-builder" not found. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "job-identity"},
	{`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq" is forbidden: violates PodSecurity "baseline:latest": privileged (container "build" must not set securityContext.privileged=true). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "job-identity"},
	{"\x1b[0;33mWARNING: Event retrieved from the cluster: Unable to retrieve some image pull secrets (registry-credentials); attempting to pull the image may not succeed.\x1b[0;m", "job-identity"},
	{"\x1b[31;1mERROR: Job failed (system failure): Error in container build: exit code: 137, reason: 'OOMKilled'\x1b[0;m", "job-terminations"},
	{"ERROR: Job failed: command terminated with exit code 137", "job-terminations"},
	{"\x1b[0;33mWARNING: Event retrieved from the cluster: The node was low on resource: memory. Threshold quantity: 100Mi, available: 81920Ki. Container build was using 7340032Ki, request is 2Gi, has larger consumption of memory. \x1b[0;m", "job-terminations"},
	{"ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: remote error: tls: internal error. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "kubelet-serving"},
	{"ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: dial tcp 127.0.0.1:10250: i/o timeout. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", "kubelet-reach"},
	{`ERROR: Job failed: prepare environment: waiting for pod running: container "build" is in CrashLoopBackOff: back-off 40s restarting failed container=build pod=runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq_gitlab-runner(6f1e2d3c-0a4b-4c5d-8e9f-a0b1c2d3e4f5): exec /bin/sh: exec format error. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "node-arch"},
	// The reason after "unable to upgrade connection: " decides: the kubelet's
	// `container not found ("helper")` is a helper that is not running (node-arch),
	// and the upgrade that reached the kubelet passed every proxy; an answer that
	// is no Status (empty, a proxy's page) is a front that broke it (exec-upgrade).
	{`ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: container not found ("helper"). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "node-arch"},
	{`ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: empty server response. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "exec-upgrade"},
	// A TLS failure names the connection's check and clock-skew: a certificate
	// "not yet valid" on a certificate fine on disk is a clock's doing, but the
	// same words come from a certificate that has really expired.
	{"Dec 01 09:03:12 runner-host.example.invalid gitlab-runner[812]: WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post \"https://gitlab.example.invalid/api/v4/jobs/request\": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:00:40Z is before 2026-11-29T12:01:00Z", "clock-skew"},
	{"Dec 01 09:03:12 runner-host.example.invalid gitlab-runner[812]: WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post \"https://gitlab.example.invalid/api/v4/jobs/request\": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:00:40Z is before 2026-11-29T12:01:00Z", "gitlab-reachability"},
	{`ERROR: Job failed (system failure): prepare environment: setting up credentials: Post "https://127.0.0.1:6443/api/v1/namespaces/gitlab-runner/secrets": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:02:10Z is after 2026-11-29T12:01:00Z. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "clock-skew"},
	{`ERROR: Job failed (system failure): prepare environment: setting up credentials: Post "https://127.0.0.1:6443/api/v1/namespaces/gitlab-runner/secrets": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:02:10Z is after 2026-11-29T12:01:00Z. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`, "api-auth"},
	{"\x1b[31;1mERROR: Preparation failed: getting docker info: permission denied while trying to connect to the docker API at unix:///var/run/docker.sock\x1b[0;m", "docker-socket"},
	{"ERROR: Preparation failed: getting docker info: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?", "docker-socket"},
	{"Using helper image:  registry.example.invalid/ci/gitlab-runner-helper:x86_64-v19.2.0  (overridden, default would be  registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v19.3.0 )", "helper-image"},
	{"\x1b[31;1mERROR: Preparation failed: unable to acquire instance within the configured timeout of 15m0s: context deadline exceeded\x1b[0;m", "dvp-pool"},
	{"ERROR: Job failed (system failure): unable to acquire instance within the configured timeout of 15m0s: context deadline exceeded", "dvp-pool"},
	// runner-rbac and owner-rbac name every apiserver Forbidden ("is forbidden:
	// User \""); for a DVP refusal they are a false lead only on paper: both
	// apply to the kubernetes executor alone and skip for the instance and
	// docker-autoscaler runners fleeting-plugin-dvp serves.
	{`virtualmachinepools.virtualization.deckhouse.io "code-runner" is forbidden: User "system:serviceaccount:code-runner-dvp:code-runner" cannot get resource "virtualmachinepools" in API group "virtualization.deckhouse.io" in the namespace "code-runner-dvp"`, "dvp-rbac"},
	{"Dec 01 09:03:12 runner-host.example.invalid gitlab-runner[812]: WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: running autoscaler plugin: loading fleeting plugin: plugin not found: lstat /home/gitlab-runner/.config/fleeting/plugins/registry.gitlab.com/gitlab-org/fleeting/plugins/fleeting-plugin-dvp: no such file or directory executor=instance runner=Zx8y1Abc runner_name=dvp", "fleeting-plugin"},
	{"Dec 01 09:03:12 runner-host.example.invalid gitlab-runner[812]: WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: reading instance group connector key: open /ssh/id_ed25519: permission denied executor=instance runner=Zx8y1Abc runner_name=dvp", "fleeting-connector"},
	{"\x1b[31;1mERROR: Job failed: prepare environment: Process exited with status 2. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information\x1b[0;m", "fleeting-connector"},
	{"Dec 01 09:03:12 runner-host.example.invalid gitlab-runner[812]: WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: creating state storage: mkdir /var/lib/gitlab-runner/state: permission denied executor=instance runner=Zx8y1Abc runner_name=dvp", "fleeting-state"},
	{"Dec 01 09:00:07 runner-host.example.invalid gitlab-runner[812]: WARNING: CONFIGURATION: Long polling issues detected.", "config-lint"},
	{"Dec 01 09:00:07 runner-host.example.invalid gitlab-runner[812]:   - Worker starvation bottleneck: 'concurrent' setting (1) is less than number of runners (3)", "config-lint"},
	{"WARNING: The specified runner request concurrency (4) is larger than the current global concurrent limit (2). The global concurrent limit will not be increased and takes precedence.", "config-lint"},
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
