//go:build integration

package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/execupgrade"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// kubeRunner is one [[runners]] entry of twoRunnersConfig.
type kubeRunner struct{ name, namespace, context string }

// twoRunnersConfig is a config.toml with one Kubernetes [[runners]] per
// entry, each the guide's runner (the keys it gets right, so config-lint has
// nothing to say) with its own name, namespace and, when set, context. None
// sets host: each loads the kubeconfig of KUBECONFIG.
func twoRunnersConfig(rs ...kubeRunner) string {
	var b strings.Builder
	b.WriteString("concurrent = 2\ncheck_interval = 3\n")
	for _, r := range rs {
		ctx := ""
		if r.context != "" {
			ctx = fmt.Sprintf("    context = %q\n", r.context)
		}
		fmt.Fprintf(&b, `
[[runners]]
  name = %q
  url = "https://gitlab.example.invalid:8443/"
  token = "glrt-not-a-real-token-0000"
  executor = "kubernetes"
  output_limit = 51200

  [runners.kubernetes]
    namespace = %q
%s    pull_policy = ["if-not-present"]
    cpu_request = "100m"
    memory_request = "128Mi"
    helper_cpu_request = "100m"
    helper_memory_request = "128Mi"
    poll_timeout = 3600

    [runners.kubernetes.affinity]
      [runners.kubernetes.affinity.pod_anti_affinity]
        [[runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution]]
          topology_key = "kubernetes.io/hostname"
          [runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.label_selector]
            [[runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.label_selector.match_expressions]]
              key = "project.runner.gitlab.com/id"
              operator = "Exists"
`, r.name, r.namespace, ctx)
	}
	return b.String()
}

// twoRunnersWorld is the healthy gateway cluster of TestClusterScenarios
// with ns-alpha and no ns-beta: the owner bound to cluster-admin (and the
// binding in effect), the node-local DNS DaemonSet. It returns the owner's
// kubeconfig.
func twoRunnersWorld(t *testing.T) (*testenv.Env, []byte) {
	t.Helper()
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	env.WaitAuthorized(ownerDID, []string{testenv.OwnersGroup}, "*", "*")
	env.EnsureNamespace("ns-alpha")
	createNodeDNSDaemonSet(t, env)
	return env, ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour))
}

var alphaBeta = twoRunnersConfig(kubeRunner{name: "alpha", namespace: "ns-alpha"}, kubeRunner{name: "beta", namespace: "ns-beta"})

// runTwo runs doctor (not --offline) against a root whose runner process
// has config and kubeconfig, as runAgainst does, and returns the report and
// the JSON it parsed from.
func runTwo(t *testing.T, config string, kubeconfig []byte, extra ...string) (*report.Report, string) {
	t.Helper()
	root := testroot.New(t)
	root.GuideRunner(config, kubeconfig)
	began := time.Now()
	rep, out := runReport(t, append([]string{"run", "--root", root.Dir, "-o", "json", "--now", time.Now().UTC().Format(time.RFC3339),
		"--timeout", "60s", "--skip", "gitlab-reachability"}, extra...)...)
	t.Logf("doctor ran in %s", time.Since(began).Round(time.Millisecond))
	if len(rep.Runners) != 2 {
		t.Fatalf("report.runners = %+v, want the two [[runners]]", rep.Runners)
	}
	return rep, out
}

// statusOf is a check's status for runner index (0: host-wide), "" when the
// report does not list it.
func statusOf(rep *report.Report, id string, runner int) string {
	for _, c := range rep.Checks {
		if c.ID != id {
			continue
		}
		idx := 0
		if c.Runner != nil {
			idx = c.Runner.Index
		}
		if idx == runner {
			return string(c.Status)
		}
	}
	return ""
}

// findingsOf are the findings of check for runner index.
func findingsOf(rep *report.Report, id string, runner int) []report.Finding {
	var out []report.Finding
	for _, f := range rep.Findings {
		if f.Check == id && f.Runner != nil && f.Runner.Index == runner {
			out = append(out, f)
		}
	}
	return out
}

func TestTwoRunnersOneNamespaceMissing(t *testing.T) {
	_, kc := twoRunnersWorld(t)
	rep, out := runTwo(t, alphaBeta, kc)

	if rep.Summary.ExitCode != 2 {
		t.Errorf("exit code %d, want 2", rep.Summary.ExitCode)
	}
	// The JSON itself, not only what report.Report decodes: findings[0]
	// carries "runner": {"index": 2, "name": "beta"}.
	var raw struct {
		Findings []struct {
			Check  string          `json:"check"`
			Cause  string          `json:"cause"`
			Runner json.RawMessage `json:"runner"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Findings) == 0 {
		t.Fatalf("no findings; want namespace for runner 2 first")
	}
	top := raw.Findings[0]
	var ref map[string]any
	if err := json.Unmarshal(top.Runner, &ref); err != nil || ref == nil {
		t.Errorf("findings[0].runner = %s, want an object (%v)", top.Runner, err)
	}
	if top.Check != "namespace" || len(ref) != 2 || ref["index"] != float64(2) || ref["name"] != "beta" {
		t.Errorf("findings[0] = %s for runner %s, want namespace for {\"index\":2,\"name\":\"beta\"}", top.Check, top.Runner)
	}
	if !strings.Contains(top.Cause, `"ns-beta"`) {
		t.Errorf("findings[0].cause does not name ns-beta: %s", top.Cause)
	}
	for _, f := range rep.Findings {
		if f.Check == "namespace" && (f.Runner == nil || f.Runner.Index != 2) {
			t.Errorf("namespace finding for runner %v, want only runner 2's: %s", f.Runner, f.Cause)
		}
	}
	if got := statusOf(rep, "namespace", 1); got != "pass" {
		t.Errorf("namespace for runner 1: %q, want pass", got)
	}
	if got := statusOf(rep, "namespace", 2); got != "fail" {
		t.Errorf("namespace for runner 2: %q, want fail", got)
	}
	if got := statusOf(rep, "namespace", 0); got != "" {
		t.Errorf("namespace also listed host-wide (%s): a per-runner check is listed once per runner", got)
	}
}

// request is one audit event reduced to what the counts key on.
func request(e testenv.AuditEvent) string {
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	if e.ObjectRef.APIGroup != "" {
		r += "." + e.ObjectRef.APIGroup
	}
	s := e.Verb + " " + r
	if e.ObjectRef.Namespace != "" {
		s += " -n " + e.ObjectRef.Namespace
	}
	if e.ObjectRef.Name != "" {
		s += " " + e.ObjectRef.Name
	}
	if u, err := url.Parse(e.RequestURI); err == nil {
		if fs := u.Query().Get("fieldSelector"); fs != "" {
			s += " fieldSelector=" + fs
		}
		if ls := u.Query().Get("labelSelector"); ls != "" {
			s += " labelSelector=" + ls
		}
	}
	return s
}

// requestsOf waits for the audit log to settle and returns user's requests
// made after the first skip events of the log, one event per request: a
// long-running request (exec, watch) is also logged at ResponseStarted,
// which is not counted twice.
func requestsOf(t *testing.T, env *testenv.Env, user string, skip int) []testenv.AuditEvent {
	t.Helper()
	return env.WaitAuditSettled(time.Second, skip, func(e testenv.AuditEvent) bool {
		return e.User.Username == user && e.Stage != "ResponseStarted"
	})
}

// assertReadOnly is TestReadOnlyByAuditLog's promise for a list of events:
// reads, the reviews, and exec-upgrade's probe of a pod that does not
// exist, answered 404, or 403 for an identity that may not exec: in both
// nothing is created or run.
func assertReadOnly(t *testing.T, events []testenv.AuditEvent) {
	t.Helper()
	for _, e := range events {
		switch {
		case e.Verb == "get" || e.Verb == "list" || e.Verb == "watch":
		case e.Verb == "create" && reviews[e.ObjectRef.Resource]:
		case e.Verb == "create" && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "" && strings.Contains(e.RequestURI, "dryRun=All"):
			// job-admission's dry run: nothing is stored.
		case e.Verb == "create" && e.ObjectRef.Subresource == "exec" && e.ObjectRef.Name == execupgrade.ProbePod &&
			(e.ResponseStatus.Code == 404 || e.ResponseStatus.Code == 403):
		default:
			t.Errorf("doctor sent %s %s (%s/%s, %d): default mode must be read-only", e.Verb, e.RequestURI, e.ObjectRef.Resource, e.ObjectRef.Subresource, e.ResponseStatus.Code)
		}
	}
}

func countRequests(events []testenv.AuditEvent) map[string]int {
	n := map[string]int{}
	for _, e := range events {
		n[request(e)]++
	}
	return n
}

func logCounts(t *testing.T, who string, n map[string]int) {
	t.Helper()
	keys := make([]string, 0, len(n))
	total := 0
	for k, v := range n {
		keys = append(keys, k)
		total += v
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %d× %s\n", n[k], k)
	}
	t.Logf("%d requests from %s:\n%s", total, who, b.String())
}

func TestTwoRunnersShareOneClient(t *testing.T) {
	env, kc := twoRunnersWorld(t)
	before, err := env.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := runTwo(t, alphaBeta, kc)
	for _, c := range rep.Checks {
		if c.Status == checks.StatusUnknown {
			t.Errorf("%s (runner %v) unknown: %s", c.ID, c.Runner, c.Reason)
		}
	}

	mine := requestsOf(t, env, ownerDID, len(before))
	if len(mine) == 0 {
		t.Fatalf("no request from %s in the audit log", ownerDID)
	}
	n := countRequests(mine)
	logCounts(t, ownerDID, n)

	// Runner-independent: once per target, however many runners use it.
	for req, want := range map[string]int{
		"create selfsubjectreviews.authentication.k8s.io": 1,
		"list nodes": 1,
		"list pods fieldSelector=status.phase=Pending": 1,
		"list priorityclasses.scheduling.k8s.io":       1,
		// node-local-dns's view of the add-on, the add-on's pods by its
		// label (node-local-dns's, and kubelet-reach's to read from), and
		// owner-rbac's review of verb * on *: the same question for every
		// runner of the target.
		"list daemonsets.apps -n kube-system":                                              1,
		"list pods -n kube-system labelSelector=app.kubernetes.io/name=socialweb-node-dns": 1,
		"create selfsubjectaccessreviews.authorization.k8s.io":                             1,
		// Once per (target, namespace).
		"list pods -n ns-alpha": 1,
		"list pods -n ns-beta":  1,
		// Once per runner: job-admission's dry run of its job pod.
		"create pods -n ns-alpha": 1,
		"create pods -n ns-beta":  1,
	} {
		if n[req] != want {
			t.Errorf("%q sent %d times, want %d", req, n[req], want)
		}
	}
	// The Warning events: per namespace or cluster-wide, but no list twice.
	events := 0
	for req, k := range n {
		if strings.HasPrefix(req, "list events") {
			events++
			if k != 1 {
				t.Errorf("%q sent %d times, want once", req, k)
			}
		}
	}
	if events == 0 {
		t.Errorf("no Warning events listed")
	}
	assertReadOnly(t, mine)
}

// twoUserKubeconfig is one kubeconfig with a context per user, all on the
// env's apiserver: contexts[name] = the user's certificate and key.
func twoUserKubeconfig(t *testing.T, env *testenv.Env, current string, users map[string][2][]byte) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = &clientcmdapi.Cluster{Server: env.URL, CertificateAuthorityData: env.CAPEM}
	for name, pair := range users {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: pair[0], ClientKeyData: pair[1]}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: name}
	}
	cfg.CurrentContext = current
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bareUser has a certificate the apiserver trusts and no binding at all:
// only what system:authenticated may (the self reviews).
const bareUser = "ci-bare-runner"

func TestTwoRunnersDifferentContexts(t *testing.T) {
	env, _ := twoRunnersWorld(t)
	env.EnsureNamespace("ns-beta")
	now := time.Now()
	ownerCert, ownerKey := env.OwnerCert(ownerDID, now.Add(12*time.Hour))
	bareCert, bareKey := env.MintClient(bareUser, nil, now.Add(-time.Hour), now.Add(12*time.Hour))
	kc := twoUserKubeconfig(t, env, "good", map[string][2][]byte{
		"good": {ownerCert, ownerKey},
		"bare": {bareCert, bareKey},
	})
	config := twoRunnersConfig(
		kubeRunner{name: "good", namespace: "ns-alpha", context: "good"},
		kubeRunner{name: "bare", namespace: "ns-beta", context: "bare"})
	before, err := env.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := runTwo(t, config, kc)

	if rep.Summary.ExitCode != 2 {
		t.Errorf("exit code %d, want 2", rep.Summary.ExitCode)
	}
	// owner-rbac does not report for an identity outside the owners group
	// (its RBAC is scoped by design): runner-rbac is the check that does.
	if got := statusOf(rep, "owner-rbac", 1); got != "pass" {
		t.Errorf("owner-rbac for runner 1: %q, want pass", got)
	}
	if got := statusOf(rep, "owner-rbac", 2); got != "skipped" {
		t.Errorf("owner-rbac for runner 2: %q, want skipped (not a gateway owner)", got)
	}
	if got := statusOf(rep, "runner-rbac", 1); got != "pass" {
		t.Errorf("runner-rbac for runner 1: %q, want pass", got)
	}
	if got := statusOf(rep, "runner-rbac", 2); got != "fail" {
		t.Errorf("runner-rbac for runner 2: %q, want fail", got)
	}
	for _, id := range []string{"runner-rbac", "owner-rbac"} {
		for _, f := range findingsOf(rep, id, 1) {
			t.Errorf("%s finding for runner 1 (the owner, cluster-admin): %s", id, f.Cause)
		}
	}
	for _, f := range rep.Findings {
		if (f.Check == "runner-rbac" || f.Check == "owner-rbac") && f.Runner == nil {
			t.Errorf("%s finding without a runner: %s", f.Check, f.Cause)
		}
	}
	fs := findingsOf(rep, "runner-rbac", 2)
	if len(fs) != 1 {
		t.Fatalf("runner-rbac findings for runner 2: %d, want 1", len(fs))
	}
	f := fs[0]
	if f.Runner.Name != "bare" {
		t.Errorf("runner-rbac finding's runner = %+v, want {2 bare}", *f.Runner)
	}
	for _, want := range []string{bareUser, `"ns-beta"`, "create pods", "get pods", "delete pods", "create pods/exec", "create secrets"} {
		if !strings.Contains(f.Cause, want) {
			t.Errorf("runner-rbac cause lacks %q: %s", want, f.Cause)
		}
	}
	if strings.Contains(f.Cause, ownerDID) {
		t.Errorf("runner 2's runner-rbac names the owner of runner 1's context: %s", f.Cause)
	}
	if f.CausedBy != nil {
		t.Errorf("runner-rbac for runner 2 folded under %s; owner-rbac was skipped, so it is a root", *f.CausedBy)
	}

	// Two targets (one server, two credentials): one identity review each,
	// and each runner's requests made with its own context's credential.
	owner := requestsOf(t, env, ownerDID, len(before))
	bare := requestsOf(t, env, bareUser, len(before))
	on, bn := countRequests(owner), countRequests(bare)
	logCounts(t, ownerDID, on)
	logCounts(t, bareUser, bn)
	for who, n := range map[string]map[string]int{ownerDID: on, bareUser: bn} {
		if got := n["create selfsubjectreviews.authentication.k8s.io"]; got != 1 {
			t.Errorf("%s sent %d SelfSubjectReviews, want 1", who, got)
		}
	}
	for req := range on {
		if strings.Contains(req, "-n ns-beta") {
			t.Errorf("the owner sent %s: ns-beta is runner 2's, whose context is bare", req)
		}
	}
	for req := range bn {
		if strings.Contains(req, "-n ns-alpha") {
			t.Errorf("%s sent %s: ns-alpha is runner 1's, whose context is good", bareUser, req)
		}
	}
	assertReadOnly(t, owner)
	assertReadOnly(t, bare)
}

// -n overrides every runner's namespace, as kubectl's does: with -n
// ns-alpha the missing ns-beta is not looked at, and the report says so.
func TestNamespaceOverride(t *testing.T) {
	_, kc := twoRunnersWorld(t)
	rep, _ := runTwo(t, alphaBeta, kc, "-n", "ns-alpha")
	for _, f := range rep.Findings {
		if f.Check == "namespace" {
			t.Errorf("-n ns-alpha still reports a namespace finding: %s", f.Cause)
		}
	}
	for _, r := range []int{1, 2} {
		if got := statusOf(rep, "namespace", r); got != "pass" {
			t.Errorf("namespace for runner %d under -n ns-alpha: %q, want pass", r, got)
		}
	}
}
