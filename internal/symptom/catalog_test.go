package symptom_test

import (
	"os"
	"slices"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/symptom"
)

// captured are symptom lines as the runner, client-go or the runner's docs
// print them, for every check of the catalog: each of a check's patterns
// must match one of its lines. A check registered without lines here fails
// the test, so every new check brings the lines its patterns are for.
var captured = map[string][]string{
	"runner-process": {
		// docs/configuration/autoscale.md, v19.3.0.
		"FATAL: Service run failed   error=toml: cannot load TOML value of type int64 into a Go float",
		// commands/multi.go checkConfig, v19.3.0 (docs/runner-source-notes.md §2).
		"ERROR: Failed to load config stat /etc/gitlab-runner/config.toml: no such file or directory  builds=0 max_builds=1",
	},
	"runner-service": {
		// common/build.go setTraceStatus + executors/kubernetes/kubernetes.go Prepare, v19.3.0 (notes §1).
		"\x1b[31;1mERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable\x1b[0;m",
	},
	"config-decode": {
		// commands/multi.go Execute + common/config.go LoadConfig, v19.3.0 (notes §3).
		`FATAL: Service run failed                           error=decoding configuration file: toml: line 1 (last key "concurrent"): incompatible types: TOML value has type string; destination has type integer`,
		// common/config.go, v19.3.0, with the runner's own error (runnerconfig/refusals_test.go).
		"FATAL: Service run failed                           error=loading configuration for dm runner: compiling docker machine autoscaling periods: invalid time periods [* * 25 * * * *], caused by: syntax error in hour field: '25'",
		"FATAL: Service run failed                           error=invalid config: validating global labels: invalid label value, doesn't match ^[a-z]: platform/ci",
		// docs/configuration/autoscale.md, v19.3.0.
		"FATAL: Service run failed   error=toml: cannot load TOML value of type int64 into a Go float",
		// commands/multi.go, v19.3.0 (notes §2).
		"ERROR: Failed to load config stat /etc/gitlab-runner/config.toml: no such file or directory  builds=0 max_builds=1",
	},
	"config-unknown-keys": {
		// commands/lint.go, v19.3.0.
		"2 unknown key(s) found in /etc/gitlab-runner/config.toml:",
		"  unknown key: runners.run_untagged",
		// commands/register.go, v19.3.0 (notes §4).
		"FATAL: Runner configuration other than name and executor configuration is reserved (specifically --locked, --access-level, --run-untagged, --maximum-timeout, --paused, --tag-list, and --maintenance-note) and cannot be specified when registering with a runner authentication token.",
		"WARNING: You have specified an authentication token in the legacy parameter --registration-token. This has triggered the 'legacy-compatible registration process' which has resulted in the following command line parameters being ignored: --locked, --access-level, --run-untagged, --maximum-timeout, --paused, --tag-list, and --maintenance-note.",
	},
	"runner-kubeconfig-env": {
		"ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable",
	},
	"kubeconfig-file": {
		"ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable",
		// client-go tools/clientcmd/loader.go, v0.36.3, behind Prepare's "getting Kubernetes config: %w".
		`ERROR: Job failed: getting Kubernetes config: error loading config file "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml": open /etc/gitlab-runner/tenant-ci/kubeconfig.yaml: permission denied`,
	},
	"cluster-override": {
		// executors/kubernetes/util.go, v19.3.0, behind Prepare's "getting Kubernetes config: %w".
		"ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth",
	},
	"cert-expiry": {
		// k8s.io/apimachinery errors.go, v0.37.2 ("%s (%s %s)"), behind "setting up credentials: %w".
		"ERROR: Job failed (system failure): prepare environment: setting up credentials: the server has asked for the client to provide credentials (post secrets). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
	},
	"config-lint": {
		// docs/executors/kubernetes/troubleshooting.md, v19.3.0.
		"Job failed (system failure): timed out waiting for pod to start",
		// helpers/trace/buffer.go, v19.3.0.
		"Job's log exceeded limit of 4194304 bytes.",
		// commands/multi.go, v19.3.0.
		"WARNING: CONFIGURATION: Long polling issues detected.",
	},
	"gitlab-reachability": {
		// network/gitlab.go RequestJob / VerifyRunner, v19.3.0.
		`WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post "https://gitlab.example.invalid/api/v4/jobs/request": dial tcp: lookup gitlab.example.invalid: no such host`,
		"ERROR: Verifying runner... failed                   runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/runners/verify",
		// commands/health_helper.go, v19.3.0.
		`ERROR: Runner "https://gitlab.example.invalidZx8y1Abc" is unhealthy and will be disabled for 1h0m0s seconds!  unhealthy_requests=3 unhealthy_requests_limit=3`,
		// docs/configuration/tls-self-signed.md, v19.3.0.
		"Post https://hostname.tld/api/v4/jobs/request: x509: certificate signed by unknown authority",
		"fatal: unable to access 'https://gitlab.example.com/group/project.git/': SSL certificate problem: self-signed certificate in certificate chain",
		// git's fatal: with curl's "Failed to connect to path port 3000" (docs/install/osx.md, v19.3.0).
		"fatal: unable to access 'https://gitlab.example.invalid:8443/group/project.git/': Failed to connect to gitlab.example.invalid port 8443 after 130 ms: Couldn't connect to server",
	},
	"runner-token": {
		// network/gitlab.go, v19.3.0.
		"ERROR: Checking for jobs... forbidden                runner=Zx8y1Abc status=403 Forbidden",
		"ERROR: Checking for jobs... client error             runner=Zx8y1Abc status=422 Unprocessable Entity",
		"Verifying runner... is not valid                    runner=Zx8y1Abc",
		"ERROR: Verifying runner... is removed                runner=Zx8y1Abc status=403 Forbidden",
		// commands/health_helper.go, v19.3.0.
		`ERROR: Runner "https://gitlab.example.invalidZx8y1Abc" is unhealthy and will be disabled for 1h0m0s seconds!  unhealthy_requests=3 unhealthy_requests_limit=3`,
	},
	"api-auth": {
		"ERROR: Job failed (system failure): prepare environment: setting up credentials: the server has asked for the client to provide credentials (post secrets). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
		// docs/configuration/configuring_runner_operator.md, v19.3.0.
		"ERROR: Job failed (system failure): prepare environment: setting up credentials: Post https://172.21.0.1:443/api/v1/namespaces/<KUBERNETES_NAMESPACE>/secrets: net/http: TLS handshake timeout. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
		// docs/executors/kubernetes/troubleshooting.md, v19.3.0.
		`Error: Job failed (system failure): prepare environment: waiting for pod running: Get "https://xx.xx.xx.x:443/api/v1/namespaces/gitlab-runner/runner-0001": dial tcp xx.xx.xx.x:443 connect: connection refused`,
	},
	"owner-rbac": {
		// docs/install/kubernetes_troubleshooting.md, v19.3.0.
		`ERROR: Job failed (system failure): secrets is forbidden: User "system:serviceaccount:gitlab:default"`,
	},
	"runner-rbac": {
		`ERROR: Job failed (system failure): secrets is forbidden: User "system:serviceaccount:gitlab:default"`,
		// docs/install/kubernetes_troubleshooting.md, v19.3.0 (the message's second line there).
		`cannot create resource "secrets" in API group "" in the namespace "gitlab"`,
	},
	"namespace": {
		// executors/kubernetes/kubernetes.go "setting up build pod: %w", v19.3.0, with NewNotFound's text.
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: namespaces "gitlab-runner" not found. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
	},
	"pending-no-node": {
		// executors/kubernetes/util.go + common/build.go, v19.3.0.
		"ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending). Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information",
	},
	"pending-unschedulable": {
		// executors/kubernetes/util.go getPodPhase ("\t%s: %q"), v19.3.0, with kube-scheduler's message.
		"\tUnschedulable: \"0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.\"",
	},
	"image-pull": {
		// executors/kubernetes/internal/watchers/pod.go, v19.3.0, with the kubelet's waiting message.
		`ERROR: Job failed: prepare environment: waiting for pod running: image pull failed: Back-off pulling image "registry.example.invalid/ci/golang:1.24". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		// executors/kubernetes/kubernetes.go "Event retrieved from the cluster: %s", v19.3.0, with
		// pkg/kubelet/images/image_manager.go's events, v1.37.2.
		`WARNING: Event retrieved from the cluster: Failed to pull image "registry.example.invalid/ci/golang:1.24": rpc error: code = NotFound desc = failed to pull and unpack image "registry.example.invalid/ci/golang:1.24": not found`,
		`WARNING: Event retrieved from the cluster: Back-off pulling image "registry.example.invalid/ci/golang:1.24"`,
	},
	"node-local-dns": {
		// docs/executors/kubernetes/troubleshooting.md, v19.3.0.
		"fatal: unable to access 'https://gitlab-ci-token:token@example.com/repo/proj.git/': Could not resolve host: example.com",
		// Go's net.DNSError against the node-local address.
		"dial tcp: lookup gitlab.example.invalid on 169.254.20.10:53: read udp 10.0.0.5:41234->169.254.20.10:53: i/o timeout",
	},
	"scale-to-zero": {
		// executors/kubernetes/autoscaler/pause_pod_manager.go, v19.3.0, in the runner formatter.
		"Starting pause pod manager                          runner=Zx8y1Abc",
		"Created pause pod deployment                        deployment=runner-zx8y1abc-pause replicas=1",
		"Updated pause pod deployment replicas               deployment=runner-zx8y1abc-pause replicas=2",
	},
	"exec-upgrade": {
		// k8s.io/streaming pkg/httpstream/spdy/roundtripper.go, v0.37.2.
		"unable to upgrade connection: unable to read error from server response",
	},
}

func matcher(t *testing.T) *symptom.Matcher {
	t.Helper()
	m, err := symptom.New(all.Checks())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEveryPatternMatchesALineItWasQuotedFrom(t *testing.T) {
	m := matcher(t)
	for _, c := range all.Checks() {
		lines, ok := captured[c.ID]
		if !ok {
			t.Errorf("%s: no captured symptom line in this test's table: add the lines its patterns quote", c.ID)
			continue
		}
		for _, text := range c.Doc.Patterns {
			p, err := symptom.Compile(c.ID, text)
			if err != nil {
				t.Fatal(err)
			}
			hit := false
			for _, l := range lines {
				hit = hit || p.Match(symptom.Clean(l))
			}
			if !hit {
				t.Errorf("%s: pattern %q matches none of its captured lines", c.ID, text)
			}
		}
		for _, l := range lines {
			if !slices.Contains(m.Line(symptom.Clean(l)), c.ID) {
				t.Errorf("%s: its captured line %q does not name it", c.ID, l)
			}
		}
	}
}

// Healthy logs name no check: a pattern that matches a job that worked
// would send every reader of a good log after a cause.
func TestHealthyLogsMatchNothing(t *testing.T) {
	m := matcher(t)
	for _, path := range []string{"../../testdata/logs/healthy-kubernetes-job.log", "../../testdata/logs/healthy-runner-journal.log"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.Scan(path, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s.Lines < 15 {
			t.Fatalf("%s: only %d lines", path, s.Lines)
		}
		for _, x := range s.Matches {
			t.Errorf("%s:%d names %v: %q", path, x.Line, x.Checks, x.Text)
		}
	}
}
