package symptom_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
)

// TestParseReadsTheParts: the producer's prefix goes, and the endpoint and
// the innermost cause are read the same whoever printed the line and in
// whichever Go's wording.
func TestParseReadsTheParts(t *testing.T) {
	for _, tc := range []struct {
		line     string
		body     string // a prefix of the body, "" not asserted
		endpoint string
		cause    string // one of the causes, "" none
		kubectl  bool
		clock    bool
	}{
		// The runner's job log, go1.14+ quoting the URL.
		{line: `ERROR: Job failed (system failure): prepare environment: setting up credentials: Post "https://127.0.0.1:6443/api/v1/namespaces/gitlab-runner/secrets": dial tcp 127.0.0.1:6443: connect: connection refused`,
			endpoint: checks.EndpointAPIServer, cause: checks.CauseRefused},
		// The same before go1.14, the URL bare; a journald prefix.
		{line: `Dec 01 09:03:12 runner-host gitlab-runner[812]: ERROR: Job failed (system failure): prepare environment: setting up credentials: Post https://172.21.0.1:443/api/v1/namespaces/ci/secrets: net/http: TLS handshake timeout`,
			body: "ERROR: Job failed", endpoint: checks.EndpointAPIServer, cause: checks.CauseTimeout},
		// A docker compose service column, an RFC 3339 stamp, klog's header.
		{line: `runner_1  | WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post "https://gitlab.example.invalid/api/v4/jobs/request": dial tcp 10.0.0.1:443: i/o timeout`,
			body: "WARNING: Checking", endpoint: checks.EndpointGitLab, cause: checks.CauseTimeout},
		{line: `2026-11-29T12:00:00.123456Z 01E ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided`,
			body: "ERROR: Job failed", endpoint: checks.EndpointAPIServer},
		{line: `E1129 12:00:00.123456   4242 reflector.go:158] "Unhandled Error" err="error dialing backend: dial tcp 10.0.0.7:10250: i/o timeout"`,
			body: `"Unhandled Error"`, endpoint: checks.EndpointKubelet, cause: checks.CauseTimeout},
		// A kubectl describe event row and a markdown quote.
		{line: `  Warning  FailedScheduling  3m (x5 over 10m)  default-scheduler  0/3 nodes are available: 3 Insufficient cpu.`,
			body: "0/3 nodes are available"},
		{line: `> ## fatal: unable to access 'https://gitlab.com/group/project.git/': Could not resolve host: gitlab.com`,
			body: "fatal: unable to access", endpoint: checks.EndpointGitLab, cause: checks.CauseNoSuchHost},
		// kubectl's words; the kubelet; a docker daemon over TLS; a webhook the apiserver called.
		{line: `Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout`, endpoint: checks.EndpointAPIServer, cause: checks.CauseTimeout, kubectl: true},
		{line: `error: You must be logged in to the server (Unauthorized)`, endpoint: checks.EndpointAPIServer, cause: checks.CauseUnauthorized, kubectl: true},
		{line: `error dialing backend: remote error: tls: internal error`, endpoint: checks.EndpointKubelet, cause: checks.CauseTLSRemote},
		{line: `ERROR: Job failed (system failure): Cannot connect to the Docker daemon at tcp://10.0.48.102:2376. Is the docker daemon running?`, endpoint: checks.EndpointDockerTLS},
		{line: `setting up build pod: Internal error occurred: failed calling webhook "x": failed to call webhook: Post "https://kyverno-svc.kyverno.svc:443/mutate": context deadline exceeded`,
			endpoint: checks.EndpointOther, cause: checks.CauseTimeout},
		// A Status message alone is the apiserver's.
		{line: `ERROR: Job failed (system failure): Unauthorized`, endpoint: checks.EndpointAPIServer, cause: checks.CauseUnauthorized},
		// Clock evidence: a clock never set, and a prefix five minutes off the current time.
		{line: `x509: certificate has expired or is not yet valid: current time 2000-01-01T00:03:12Z is after 2026-01-01T00:00:00Z`,
			endpoint: checks.EndpointNone, cause: checks.CauseX509Expired, clock: true},
		{line: `2026-11-29T12:00:00Z ERROR: x509: certificate has expired or is not yet valid: current time 2026-11-29T13:00:00Z is after 2026-11-29T12:30:00Z`,
			cause: checks.CauseX509Expired, clock: true},
		{line: `Nov 29 12:00:40 host gitlab-runner[1]: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:00:40Z is after 2026-11-29T11:00:00Z`,
			cause: checks.CauseX509Expired, clock: false},
		// Go before 1.15, curl's words, the client's own material.
		{line: `x509: certificate has expired or is not yet valid`, cause: checks.CauseX509Validity},
		{line: `fatal: unable to access 'https://gitlab.example.com/g/p.git/': SSL certificate problem: unable to get local issuer certificate`, endpoint: checks.EndpointGitLab, cause: checks.CauseX509Authority},
		{line: `ERROR: Job failed: creating Kubernetes client: tls: private key does not match public key`, endpoint: checks.EndpointAPIServer, cause: checks.CauseTLSMaterial},
	} {
		p := symptom.Parse(tc.line)
		if tc.body != "" && !strings.HasPrefix(p.Body, tc.body) {
			t.Errorf("%q: body %q, want it to begin %q", tc.line, p.Body, tc.body)
		}
		if tc.endpoint != "" && p.Endpoint != tc.endpoint {
			t.Errorf("%q: endpoint %s, want %s", tc.line, p.Endpoint, tc.endpoint)
		}
		if tc.cause != "" && !slices.Contains(p.Causes, tc.cause) {
			t.Errorf("%q: causes %v, want %s among them", tc.line, p.Causes, tc.cause)
		}
		if p.Kubectl != tc.kubectl || p.Clock != tc.clock {
			t.Errorf("%q: kubectl %v clock %v, want %v %v", tc.line, p.Kubectl, p.Clock, tc.kubectl, tc.clock)
		}
	}
}

// TestOneMessageEveryProducer: one failure, as the runner's job log, its
// journal, its json log, a docker compose log, a k9s table and a terminal's
// wrap print it, names the same checks.
func TestOneMessageEveryProducer(t *testing.T) {
	m := matcher(t)
	for _, tc := range []struct {
		want  string
		lines []string
	}{
		{"api-auth", []string{
			`ERROR: Job failed (system failure): prepare environment: setting up credentials: Post "https://127.0.0.1:6443/api/v1/namespaces/gitlab-runner/secrets": dial tcp 127.0.0.1:6443: i/o timeout. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
			`Dec 01 09:03:12 runner-host gitlab-runner[812]: ERROR: Job failed (system failure): prepare environment: setting up build pod: Post https://10.0.0.1:443/api/v1/namespaces/ci/pods: net/http: TLS handshake timeout`,
			`{"level":"error","msg":"Error cleaning up pod: Delete \"https://10.0.0.1:443/api/v1/namespaces/ci/pods/runner-x\": dial tcp 10.0.0.1:443: connect: connection refused","time":"2026-11-29T12:00:00Z"}`,
			`runner_1  | ERROR: Job failed (system failure): prepare environment: waiting for pod running: Get "https://10.0.0.1:6443/api/v1/namespaces/ci/pods/runner-x": dial tcp 10.0.0.1:6443: connect: no route to host`,
		}},
		{"kubelet-reach", []string{
			`ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: dial tcp 10.0.0.7:10250: i/o timeout`,
			`E1129 12:00:00.123456   4242 reflector.go:158] error dialing backend: dial tcp 10.0.0.7:10250: connect: no route to host`,
			`error dialing backend: EOF`,
		}},
		{"runner-rbac", []string{
			`ERROR: Job failed (system failure): secrets is forbidden: User "system:serviceaccount:gitlab:default" cannot create resource "secrets" in API group "" in the namespace "gitlab"`,
			// The apiserver before 1.14.
			`secrets is forbidden: User "system:serviceaccount:gitlab:default" cannot create secrets in the namespace "gitlab"`,
			// A terminal's wrap.
			"secrets is forbidden: User \"system:serviceaccount:gitlab:default\"\ncannot create resource \"secrets\" in API group \"\" in the namespace\n\"gitlab\"",
		}},
		{"pending-unschedulable", []string{
			"\x1b[0;33mWARNING: Event retrieved from the cluster: 0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.\x1b[0;m",
			// kubectl describe pod's events.
			`  Warning  FailedScheduling  3m (x5 over 10m)  default-scheduler  0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`,
			// k9s, the message column wrapped into the next row.
			"│ Warning │ FailedScheduling │ 0/3 nodes are available: 1 node(s) had untolerated taint, 2 │\n│         │                  │ Insufficient cpu.                                          │",
		}},
		{"kubeconfig-file", []string{
			"ERROR: Job failed: creating Kubernetes client: specifying a root certificates file with the insecure flag is not allowed",
			`ERROR: Job failed (system failure): prepare environment: setting up credentials: Post "https://127.0.0.1:6443/api/v1/namespaces/gitlab-runner/secrets": tls: private key does not match public key. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		}},
	} {
		for _, l := range tc.lines {
			s, err := m.Scan("paste", strings.NewReader(l))
			if err != nil {
				t.Fatal(err)
			}
			var named []string
			for _, x := range s.Matches {
				named = append(named, x.Checks...)
			}
			if !slices.Contains(named, tc.want) || len(s.Matches) != 1 {
				t.Errorf("%q: %d matches naming %v, want one naming %s", l, len(s.Matches), named, tc.want)
			}
		}
	}
}

// TestReasonDecides: one message, several causes, told apart by the
// reason after its core.
func TestReasonDecides(t *testing.T) {
	m := matcher(t)
	const hint = ". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information"
	for _, tc := range []struct {
		line string
		want []string // exactly these, no doubt left
		amb  bool     // or: an ambiguous verdict holding want
	}{
		{line: `ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: container not found ("helper")` + hint, want: []string{"node-arch"}},
		{line: `ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: empty server response` + hint, want: []string{"exec-upgrade"}},
		{line: `ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: <html><body><h1>502 Bad Gateway</h1></body></html>` + hint, want: []string{"exec-upgrade"}},
		{line: `ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: pods "runner-x" is forbidden: User "system:serviceaccount:ci:runner" cannot create resource "pods/exec" in API group "" in the namespace "ci"` + hint,
			want: []string{"runner-rbac", "owner-rbac"}},
		{line: `ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: unable to upgrade connection: Unauthorized` + hint, want: []string{"cert-expiry", "api-auth"}, amb: true},
		// "is after" without clock evidence: the clock, or a certificate that expired.
		{line: `WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post "https://gitlab.example.invalid/api/v4/jobs/request": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-29T12:02:10Z is after 2026-11-29T12:01:00Z`,
			want: []string{"clock-skew", "gitlab-reachability"}, amb: true},
		// With clock evidence: the clock.
		{line: `WARNING: Checking for jobs... failed                runner=Zx8y1Abc status=couldn't execute POST against https://gitlab.example.invalid/api/v4/jobs/request: Post "https://gitlab.example.invalid/api/v4/jobs/request": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2000-01-01T00:03:12Z is after 2000-01-01T00:00:00Z`,
			want: []string{"clock-skew", "gitlab-reachability"}},
		// The endpoint decides an unknown authority: GitLab, the apiserver, or neither.
		{line: `ERROR: Job failed (system failure): Post https://192.168.64.4:8443/api/v1/namespaces/default/secrets: x509: certificate signed by unknown authority  job=43034187 project=1208199 runner=2adc161b`, want: []string{"api-auth"}},
		{line: `Post https://hostname.tld/api/v4/jobs/request: x509: certificate signed by unknown authority`, want: []string{"gitlab-reachability"}},
		// A Forbidden of a request only the runner makes, and one of a job's kubectl.
		{line: `secrets is forbidden: User "system:serviceaccount:gitlab:default" cannot create resource "secrets" in API group "" in the namespace "gitlab"`, want: []string{"runner-rbac"}},
		{line: `Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:ci:default" cannot list resource "pods" in API group "" in the namespace "ci"`, want: []string{"job-identity"}},
	} {
		v := m.Verdict(symptom.Clean(tc.line))
		got := slices.Clone(v.Checks)
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		switch {
		case tc.amb && len(v.OneOf) == 0, !tc.amb && len(v.OneOf) > 0, !slices.Equal(got, want):
			t.Errorf("%q: names %v (one of %v), want %v (ambiguous %v)", tc.line, v.Checks, v.OneOf, tc.want, tc.amb)
		}
	}
}

// TestKubectlLinesMayNotBeTheRunners: kubectl's own words name the
// apiserver's checks only among "kubectl's own kubeconfig".
func TestKubectlLinesMayNotBeTheRunners(t *testing.T) {
	m := matcher(t)
	for _, l := range []string{
		"Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout",
		"The connection to the server 10.0.0.1:6443 was refused - did you specify the right host or port?",
		"error: You must be logged in to the server (the server has asked for the client to provide credentials)",
		"Unable to connect to the server: x509: certificate signed by unknown authority",
	} {
		v := m.Verdict(symptom.Clean(l))
		if len(v.OneOf) == 0 {
			t.Errorf("%q: names %v for sure, want an ambiguous verdict with kubectl's own kubeconfig", l, v.Checks)
			continue
		}
		for _, o := range v.OneOf {
			if !slices.ContainsFunc(o.Causes, func(c string) bool { return strings.Contains(c, "kubectl's own kubeconfig") }) {
				t.Errorf("%q: one of %v, without kubectl's own kubeconfig", l, o.Causes)
			}
		}
	}
}

// TestHealthyLinesAreNotJoined: lines of a healthy log that follow one
// another are not joined into a message that names something.
func TestHealthyLinesAreNotJoined(t *testing.T) {
	m := matcher(t)
	log := strings.Join([]string{
		"Running with gitlab-runner 19.3.0 (9cbf0074)",
		"  on kcp-tenant-kubernetes Zx8y1Abc, system ID: s_0123456789ab",
		"Preparing the \"kubernetes\" executor",
		"Using Kubernetes namespace: gitlab-runner",
		"Waiting for pod gitlab-runner/runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq to be running, status is Pending",
		"\tContainersNotReady: \"containers with unready status: [build helper]\"",
		"Running on runner-zx8y1abc-project-5-concurrent-0-k3j9m2xq via gitlab-runner-7d9f...",
		"$ echo the certificate signed by unknown authority is fine:",
		"the certificate signed by unknown authority is fine: it is a test",
		"Job succeeded",
	}, "\n")
	s, err := m.Scan("healthy", strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range s.Matches {
		t.Errorf("line %d names %v: %q", x.Line, x.Checks, x.Text)
	}
}
