package kubefacts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// TestEffectiveCluster: on the repository's fixtures, the effective cluster
// is the executor's one choice, with the rule, the file, the context and
// what is ignored, as its evidence says.
func TestEffectiveCluster(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		env     func(*hostio.Env)
		rule    ClusterRule
		at      string
		says    []string
	}{
		{fixture: "host-set", rule: RuleHost, at: "/etc/gitlab-runner/config.toml:21",
			says: []string{"effective cluster https://127.0.0.1:6443: [runners.kubernetes] host is set (/etc/gitlab-runner/config.toml:21)"}},
		{fixture: "kubernetes-service-host-with-kubeconfig", rule: RuleInCluster, at: "/proc/4242/environ",
			says: []string{"in-cluster: host is empty, KUBERNETES_SERVICE_HOST and _PORT", "can be read, so rest.InClusterConfig succeeds and wins",
				"ignored: KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml in /proc/4242/environ is never read: in-cluster config wins"}},
		{fixture: "wrong-cluster-kind-context-current", rule: RuleKubeconfig, at: "/root/.kube/config",
			says: []string{"effective cluster https://127.0.0.1:41234: kubeconfig: host is empty and KUBERNETES_SERVICE_HOST and _PORT are not in the runner's environment",
				`context "kind-kind" (the kubeconfig's current-context)`, "cluster defined in /root/.kube/config",
				"kubeconfig path list from KUBECONFIG in /proc/4242/environ"}},
		{fixture: "wrong-cluster-kind-context-current", env: func(e *hostio.Env) { e.ContextOverride = "tenant-ci" }, rule: RuleKubeconfig,
			at:   "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml",
			says: []string{"effective cluster https://kcp.socialweb.invalid/clusters/root:k3x9q2mf:tenant-ci:clusters", `context "tenant-ci" (--context given to doctor)`}},
		{fixture: "wrong-cluster-kind-context-current", env: func(e *hostio.Env) { e.KubeconfigPath = "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml" },
			rule: RuleDoctorKubeconfig, at: "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml",
			says: []string{"--kubeconfig given to doctor, which replaces the runner's own choice", "kubeconfig path list from --kubeconfig given to doctor"}},
		// Without the scenario's --context: config.toml's context names
		// one the kubeconfig lacks, so there is no cluster to name.
		{fixture: "context-override", rule: RuleKubeconfig, at: "KUBECONFIG in /proc/4242/environ",
			says: []string{"effective cluster (none)", `the kubeconfig has no context "tenant-old"`,
				`context "tenant-old" (config.toml's context key, /etc/gitlab-runner/config.toml:14)`}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			dir := "../../../testdata/fixtures/" + tc.fixture
			sc := fixture.Load(t, dir)
			env := &hostio.Env{Root: fixture.LayRoot(t, dir, sc), Clock: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Offline: true}
			if tc.env != nil {
				tc.env(env)
			}
			var got []*EffectiveCluster
			probe := &checks.Check{
				ID: "probe", Title: "t", Severity: checks.Info,
				Doc:      checks.Doc{Cause: "c", Symptom: "s", Fix: checks.Text("f"), Verify: checks.Text("v")},
				Requires: []checks.Node{EffectiveClusterFact},
				Run:      func(p *checks.Pass) error { got = append(got, EffectiveClusterFact.Get(p)); return nil },
			}
			if _, err := checks.Run(context.Background(), env, []*checks.Check{probe}, checks.Options{}); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d effective clusters, want 1", len(got))
			}
			c, e := got[0], got[0].Evidence()
			if c.Rule != tc.rule || e.Source != tc.at {
				t.Errorf("rule %d at %q, want %d at %q", c.Rule, e.Source, tc.rule, tc.at)
			}
			for _, s := range tc.says {
				if !strings.Contains(e.Detail, s) {
					t.Errorf("evidence %q does not say %q", e.Detail, s)
				}
			}
		})
	}
}
