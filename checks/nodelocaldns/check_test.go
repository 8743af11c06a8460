package nodelocaldns

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq/dnsqtest"
	"github.com/socialwebcomputer/doctor/checks/client/kube/kubefake"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

const gitlabHost = "gitlab.example.invalid"

// cluster is the API side of a test: objects for the fake clientset and
// the nodes the shared lists would hold.
type apiState struct {
	nodes   []corev1.Node
	objects []runtime.Object
	listErr error // returned for daemonsets
	noAPI   bool  // api-auth failed or no kubeconfig: only the probe can run
}

func node(name string, labelled, ready bool) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if labelled {
		n.Labels[nodedns.NodeLabel] = "true"
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	return n
}

func daemonSet() *appsv1.DaemonSet {
	l := map[string]string{nodedns.PodLabel: nodedns.PodName}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: nodedns.Namespace, Name: "node-dns"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec:       corev1.PodSpec{NodeSelector: map[string]string{nodedns.NodeLabel: "true"}},
			},
		},
	}
}

func dnsPod(name, nodeName string, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: nodedns.Namespace, Name: name, Labels: map[string]string{nodedns.PodLabel: nodedns.PodName}},
		Spec:       corev1.PodSpec{NodeName: nodeName},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if !ready {
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "coredns", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"}},
		}}}
	}
	return p
}

// healthyCluster has the DaemonSet, one labelled Ready node and its Ready pod.
func healthyCluster() apiState {
	return apiState{nodes: []corev1.Node{node("rented-1", true, true)}, objects: []runtime.Object{daemonSet(), dnsPod("node-dns-a", "rented-1", true)}}
}

// configTOML is a Kubernetes runner whose GitLab is gitlabHost.
const configTOML = "[[runners]]\n  name = \"k\"\n  url = \"https://" + gitlabHost + ":8443/\"\n  executor = \"kubernetes\"\n"

func config(t *testing.T) *runnerconfig.Runner {
	cfg, _, err := runnerconfig.Decode([]byte(configTOML))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Runners[0]
}

// runCheck runs the check through the engine on a host whose one runner is
// configTOML, its real Run and its probe (nodedns.ProbeFact asking the
// --dns-server env names, a real DNS server on loopback). The cluster is
// given: its lists (cluster.ListsFact), an API client on a fake clientset
// holding cl's objects (kubefacts.APIClientFact), whose add-on list
// (nodedns.AddonFact) computes against it, and an identity api-auth passes.
// With cl.noAPI nothing is given and the host has no kubeconfig. A
// timeout bounds the whole run, as --timeout does.
func runCheck(t *testing.T, cl apiState, env *hostio.Env, timeout time.Duration) (checks.CheckResult, *report.Report) {
	t.Helper()
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", configTOML, 0o600)
	opts := []checktest.Option{checktest.Root(root.Dir), checktest.Env(func(e *hostio.Env) {
		e.Settings, e.Offline = env.Settings, env.Offline
	}), apiGate}
	if !cl.noAPI {
		cs := fake.NewClientset(cl.objects...)
		if cl.listErr != nil {
			cs.PrependReactor("list", "daemonsets", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, cl.listErr })
		}
		opts = append(opts,
			checktest.Fact(kubefacts.APIClientFact, &kubefacts.APIClient{Client: kubefake.Wrap(cs), Server: "https://127.0.0.1:6443"}),
			checktest.Fact(kubefacts.IdentityFact, &kubefacts.Identity{User: "owner", Server: "https://127.0.0.1:6443"}),
			checktest.Fact(kubefacts.ClientCertFact, &kubefacts.ClientCert{}),
			checktest.Fact(cluster.ListsFact, &cluster.Lists{Namespace: "gitlab-runner", Nodes: cl.nodes}))
	}
	if timeout > 0 {
		opts = append(opts, checktest.Timeout(timeout))
	}
	cr := checktest.One(t, Check, opts...)
	return cr, report.Build(&checks.Result{Checks: []checks.CheckResult{cr}}, nil, "test", time.Now())
}

func withServer(addr string) *hostio.Env {
	return &hostio.Env{Settings: map[string]string{nodedns.ServerSetting.Name: addr}}
}

func causes(fs []checks.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Severity.String() + ": " + f.Cause + "\n")
	}
	return b.String()
}

func TestClusterSide(t *testing.T) {
	cases := []struct {
		name   string
		cl     apiState
		status checks.Status
		sev    checks.Severity // of the first finding
		says   string
	}{
		{"healthy", healthyCluster(), checks.StatusPass, 0, ""},
		{"no-daemonset-at-rest", apiState{}, checks.StatusFail, checks.Warning, "zero nodes, so no job has failed from it yet"},
		{"no-daemonset-with-a-node", apiState{nodes: []corev1.Node{node("rented-1", true, true)}}, checks.StatusFail, checks.Error,
			"the provider's add-on pass never applied the node network add-ons. The one node does not run"},
		{"node-without-label", apiState{nodes: []corev1.Node{node("rented-1", false, true)}, objects: []runtime.Object{daemonSet()}},
			checks.StatusFail, checks.Error, "Node rented-1 is not labelled socialweb.computer/node-local-dns=true, so the DaemonSet places no DNS pod there: it joined with an older user_data"},
		{"labelled-node-without-pod", apiState{nodes: []corev1.Node{node("rented-1", true, true)}, objects: []runtime.Object{daemonSet()}},
			checks.StatusFail, checks.Error, "no socialweb-node-dns pod is placed there"},
		{"dns-pod-not-ready", apiState{nodes: []corev1.Node{node("rented-1", true, true)}, objects: []runtime.Object{daemonSet(), dnsPod("node-dns-a", "rented-1", false)}},
			checks.StatusFail, checks.Error, "pod on node rented-1 is not Ready"},
		{"unlabelled-but-served", apiState{nodes: []corev1.Node{node("rented-1", false, true)}, objects: []runtime.Object{daemonSet(), dnsPod("node-dns-a", "rented-1", true)}},
			checks.StatusFail, checks.Warning, "yet runs a Ready DNS pod"},
		{"not-ready-node-is-not-judged", apiState{nodes: []corev1.Node{node("rented-1", true, false)}, objects: []runtime.Object{daemonSet()}}, checks.StatusPass, 0, ""},
		{"one-of-two-nodes", apiState{nodes: []corev1.Node{node("rented-1", true, true), node("rented-2", false, true)},
			objects: []runtime.Object{daemonSet(), dnsPod("node-dns-a", "rented-1", true)}}, checks.StatusFail, checks.Error, "Node rented-2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr, _ := runCheck(t, tc.cl, &hostio.Env{}, 0)
			if cr.Status != tc.status {
				t.Fatalf("status %s (%s), want %s; findings:\n%s", cr.Status, cr.Reason, tc.status, causes(cr.Findings))
			}
			if tc.says == "" {
				if len(cr.Findings) > 0 {
					t.Errorf("want no findings:\n%s", causes(cr.Findings))
				}
				return
			}
			if f := cr.Findings[0]; f.Severity != tc.sev || !strings.Contains(f.Cause, tc.says) {
				t.Errorf("first finding %s %q, want %s saying %q", f.Severity, f.Cause, tc.sev, tc.says)
			}
		})
	}
}

// TestPodPinnedByAffinity: an unbound DaemonSet pod counts for the node its
// field affinity names.
func TestPodPinnedByAffinity(t *testing.T) {
	p := dnsPod("node-dns-a", "", false)
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"rented-1"}}}}},
	}}}
	cr, _ := runCheck(t, apiState{nodes: []corev1.Node{node("rented-1", true, true)}, objects: []runtime.Object{daemonSet(), p}}, &hostio.Env{}, 0)
	if len(cr.Findings) != 1 || !strings.Contains(cr.Findings[0].Cause, "not Ready") {
		t.Errorf("want the pinned pod reported not Ready:\n%s", causes(cr.Findings))
	}
}

// TestProbeOutcomes: each misbehaving server is its own finding, on a
// cluster whose side is healthy.
func TestProbeOutcomes(t *testing.T) {
	defer shortQueries()()
	cases := []struct {
		name   string
		server string
		sev    checks.Severity
		says   []string
	}{
		{"healthy", dnsqtest.Healthy(t, "127.0.0.9").Addr, 0, nil},
		{"timeout", dnsqtest.Silent(t).Addr, checks.Error, []string{"Nothing answers DNS at", "over UDP and TCP", "Could not resolve host: " + gitlabHost}},
		{"refused", dnsqtest.Closed(t), checks.Error, []string{"refuses DNS over UDP and TCP: nothing listens", "Could not resolve host: " + gitlabHost}},
		{"rcode-refused", dnsqtest.Rcode(t, dns.RcodeRefused).Addr, checks.Error, []string{"answers REFUSED for " + gitlabHost + ", " + nodedns.ServiceName}},
		{"servfail", dnsqtest.Rcode(t, dns.RcodeServerFailure).Addr, checks.Error, []string{"answers SERVFAIL for " + gitlabHost, "fatal: unable to access 'https://" + gitlabHost + ":8443/'"}},
		{"nxdomain", dnsqtest.Rcode(t, dns.RcodeNameError).Addr, checks.Error, []string{"answers NXDOMAIN", "does not forward cluster.local", "tailnet"}},
		{"no-address", dnsqtest.NoAddress(t).Addr, checks.Error, []string{"with no A or AAAA record"}},
		{"truncated-tcp-answers", dnsqtest.TruncatedUDP(t, "127.0.0.9").Addr, checks.Warning, []string{"truncated (TC) bit", "musl", "still resolves over the other transport"}},
		{"truncated-tcp-fails", dnsqtest.TruncatedUDP(t, "").Addr, checks.Error, []string{"answers SERVFAIL"}},
		{"garbage", dnsqtest.Garbage(t).Addr, checks.Error, []string{"not a DNS server answers at"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cr, _ := runCheck(t, healthyCluster(), withServer(tc.server), 0)
			if tc.says == nil {
				if cr.Status != checks.StatusPass || len(cr.Findings) > 0 {
					t.Fatalf("status %s, findings:\n%s", cr.Status, causes(cr.Findings))
				}
				return
			}
			if cr.Status != checks.StatusFail || len(cr.Findings) == 0 {
				t.Fatalf("status %s (%s), want fail", cr.Status, cr.Reason)
			}
			all := causes(cr.Findings)
			if cr.Findings[0].Severity != tc.sev {
				t.Errorf("severity %s, want %s:\n%s", cr.Findings[0].Severity, tc.sev, all)
			}
			for _, s := range tc.says {
				if !strings.Contains(all, s) {
					t.Errorf("findings do not say %q:\n%s", s, all)
				}
			}
			if ev := cr.Findings[0].Evidence[0]; !strings.Contains(ev.Detail, "--dns-server "+tc.server) {
				t.Errorf("first evidence %q does not say why %s was asked", ev.Detail, tc.server)
			}
		})
	}
}

// TestTruncatedAsksTCP: UDP and TCP are both asked, each name once per
// transport; a name without A is asked for AAAA.
func TestTruncatedAsksTCP(t *testing.T) {
	s := dnsqtest.TruncatedUDP(t, "127.0.0.9")
	env := withServer(s.Addr)
	env.Root = t.TempDir()
	r := nodedns.Ask(t.Context(), env, s.Addr, "test", nodedns.Targets(config(t), ""))
	var got []string
	for _, a := range r.Answers {
		got = append(got, a.Net+" "+a.Name+" "+string(a.Outcome))
	}
	want := "udp " + gitlabHost + ". truncated|udp " + nodedns.ServiceName + ". truncated|tcp " + gitlabHost + ". ok|tcp " + nodedns.ServiceName + ". ok"
	if strings.Join(got, "|") != want {
		t.Errorf("exchanges\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// TestProbeFoldsUnderClusterCause: with no DaemonSet and a node, the
// refused probe is that cause's consequence; with the cluster healthy, a
// probe failure is a root of its own.
func TestProbeFoldsUnderClusterCause(t *testing.T) {
	closed := dnsqtest.Closed(t)
	_, rep := runCheck(t, apiState{nodes: []corev1.Node{node("rented-1", true, true)}}, withServer(closed), 0)
	if len(rep.Findings) != 2 {
		t.Fatalf("want 2 findings, got %d", len(rep.Findings))
	}
	root, child := rep.Findings[0], rep.Findings[1]
	if root.CausedBy != nil || !strings.Contains(root.Cause, "add-on pass") {
		t.Errorf("root is %q (causedBy %v), want the missing DaemonSet", root.Cause, root.CausedBy)
	}
	if child.CausedBy == nil || *child.CausedBy != ID || !strings.Contains(child.Cause, "refuses DNS") || child.Depth() != 1 {
		t.Errorf("probe finding %q not folded under the DaemonSet finding (causedBy %v, depth %d)", child.Cause, child.CausedBy, child.Depth())
	}

	// A server that answers SERVFAIL runs: the missing DaemonSet does not
	// explain it.
	_, rep = runCheck(t, apiState{nodes: []corev1.Node{node("rented-1", true, true)}}, withServer(dnsqtest.Rcode(t, dns.RcodeServerFailure).Addr), 0)
	if rep.Summary.Roots != 2 {
		t.Errorf("SERVFAIL folded under the missing DaemonSet: %d roots, want 2", rep.Summary.Roots)
	}

	// One node has working DNS: the failing server is not the cluster's
	// missing label on the other node, so both stay roots.
	cl := apiState{nodes: []corev1.Node{node("rented-1", true, true), node("rented-2", false, true)},
		objects: []runtime.Object{daemonSet(), dnsPod("node-dns-a", "rented-1", true)}}
	_, rep = runCheck(t, cl, withServer(closed), 0)
	if rep.Summary.Roots != 2 {
		t.Errorf("want 2 roots, got %d", rep.Summary.Roots)
	}
}

// TestEndsWithinTimeout: a server that never answers, with a check timeout
// shorter than two query timeouts, still ends with its findings reported,
// not as the engine's "timed out".
func TestEndsWithinTimeout(t *testing.T) {
	s := dnsqtest.Silent(t)
	start := time.Now()
	cr, _ := runCheck(t, healthyCluster(), withServer(s.Addr), time.Second)
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("took %s with a 1s timeout", d)
	}
	if cr.Status != checks.StatusFail || len(cr.Findings) == 0 || !strings.Contains(cr.Findings[0].Cause, "Nothing answers") {
		t.Errorf("status %s (%s), findings:\n%s", cr.Status, cr.Reason, causes(cr.Findings))
	}
}

// TestListErrorStillProbes: a refused list makes the check unknown, and
// the probe's findings are still reported.
func TestListErrorStillProbes(t *testing.T) {
	cl := healthyCluster()
	cl.listErr = errors.New("daemonsets.apps is forbidden")
	cr, _ := runCheck(t, cl, withServer(dnsqtest.Rcode(t, dns.RcodeServerFailure).Addr), 0)
	if cr.Status != checks.StatusUnknown || !strings.Contains(cr.Reason, "forbidden") {
		t.Errorf("status %s %q, want unknown for the list", cr.Status, cr.Reason)
	}
	if len(cr.Findings) != 1 || !strings.Contains(cr.Findings[0].Cause, "SERVFAIL") {
		t.Errorf("want the probe's finding:\n%s", causes(cr.Findings))
	}
}

func TestOfflineSkips(t *testing.T) {
	s := dnsqtest.Healthy(t, "127.0.0.9")
	env := withServer(s.Addr)
	env.Offline = true
	cr, _ := runCheck(t, healthyCluster(), env, 0)
	if cr.Status != checks.StatusSkipped || s.Queries() != 0 {
		t.Errorf("offline: status %s, %d queries", cr.Status, s.Queries())
	}
}

// shortQueries makes a silent server cost 300ms a question, not 2s.
func shortQueries() func() {
	old := nodedns.QueryTimeout
	nodedns.QueryTimeout = 300 * time.Millisecond
	return func() { nodedns.QueryTimeout = old }
}

// TestProbeWithoutAPI is doctor in a job pod with no kubeconfig: the cluster
// side cannot run, the direct probe still does, and without a server to ask
// the check says why it is skipped.
func TestProbeWithoutAPI(t *testing.T) {
	defer shortQueries()()
	cr, _ := runCheck(t, apiState{noAPI: true}, withServer(dnsqtest.Silent(t).Addr), 0)
	if cr.Status != checks.StatusFail || len(cr.Findings) == 0 || !strings.Contains(cr.Findings[0].Cause, "Nothing answers DNS at") {
		t.Fatalf("status %s (%s), findings:\n%s", cr.Status, cr.Reason, causes(cr.Findings))
	}
	cr, _ = runCheck(t, apiState{noAPI: true}, withServer(dnsqtest.Healthy(t, "127.0.0.9").Addr), 0)
	if cr.Status != checks.StatusPass {
		t.Fatalf("healthy server without the API: status %s (%s)", cr.Status, cr.Reason)
	}
	cr, _ = runCheck(t, apiState{noAPI: true}, &hostio.Env{}, 0)
	if cr.Status != checks.StatusSkipped || !strings.Contains(cr.Reason, "--dns-server") {
		t.Fatalf("no API, no server: status %s (%s), want skipped naming --dns-server", cr.Status, cr.Reason)
	}
}

func TestCases(t *testing.T) { checktest.Cases(t, Check, apiGate) }

// apiGate puts api-auth, which the check and the add-on's list name by ID,
// in the run's catalog, with the two checks api-auth runs after.
var apiGate = apigatetest.With()
