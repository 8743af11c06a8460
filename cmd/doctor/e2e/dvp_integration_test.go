//go:build integration

package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/dvpworld"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// TestDVPRunner is the guide's instance runner with fleeting-plugin-dvp,
// run as its Deployment in the DVP cluster (testkit/dvpworld),
// run whole: what one check concludes of each change is in checks/dvppool
// and checks/dvprbac; here, the exit codes and how the checks' results
// rank and fold together, for the runner "dvp".
func TestDVPRunner(t *testing.T) {
	env := testenv.Start(t)
	dvpworld.ApplyCRDs(t, env)
	cases := []struct {
		name  string
		shape dvpworld.Shape
		want  fixture.Want
	}{
		// The document's config.toml has no state_storage: fleeting-state's
		// warning (a restart replaces every VM) is the one finding, and no
		// error (exit 1).
		{name: "healthy", want: fixture.Want{Exit: 1, Findings: []string{"fleeting-state"}, Absent: []string{"dvp-pool", "dvp-rbac", "fleeting-plugin", "fleeting-connector"}}},
		// dvp-pool cannot read the pool as the plugin (unknown), dvp-rbac
		// says why: its finding ranks first.
		{name: "plugin-kubeconfig-without-rights", shape: dvpworld.Shape{PluginKubeconfig: true},
			want: fixture.Want{Exit: 2, Top: "dvp-rbac", Says: map[string][]string{"dvp-rbac": {"dvp-plugin", "get virtualmachinepools", "patch virtualmachinepools", "list virtualmachines", "delete virtualmachines"}},
				Status: map[string]string{"dvp-pool": "unknown"}, Reason: map[string]string{"dvp-pool": "may not get virtualmachinepools"}}},
		// No identity at all: dvp-pool's finding, dvp-rbac has nothing to ask.
		{name: "plugin-without-identity", shape: dvpworld.Shape{Outside: true},
			want: fixture.Want{Exit: 2, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {"no identity", "unable to load in-cluster configuration"}},
				Status: map[string]string{"dvp-rbac": "skipped"}}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := dvpworld.Lay(t, env.WithT(t), "dvp-"+strconv.Itoa(i), tc.shape)
			rep, out := runReport(t, "run", "--root", w.Root.Dir, "-o", "json", "--timeout", "60s", "--skip", "gitlab-reachability",
				"--kubeconfig", dvpworld.OperatorKubeconfig)
			fixture.AssertWant(t, rep, tc.want)
			if tc.want.Top != "" && len(rep.Findings) > 0 {
				if r := rep.Findings[0].Runner; r == nil || r.Name != "dvp" {
					t.Errorf("top finding is for runner %v, want dvp", r)
				}
			}
			for _, secret := range w.Secrets() {
				if strings.Contains(out, secret) {
					t.Errorf("the output carries key material %q", secret)
				}
			}
		})
	}
}

// tokenFor is a TokenRequest token of the service account, as the kubelet
// mounts one into the pod.
func tokenFor(t *testing.T, env *testenv.Env, ns, sa string) string {
	return dvpworld.TokenFor(t, env, ns, sa)
}

func readTestdata(t *testing.T, rel string) []byte { return dvpworld.Testdata(t, rel) }

func splitYAML(t *testing.T, b []byte) []map[string]any { return dvpworld.SplitYAML(t, b) }

func toYAML(t *testing.T, m map[string]any) []byte { return dvpworld.ToYAML(t, m) }
