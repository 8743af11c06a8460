//go:build integration

package dvprbac_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dvprbac"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/dvpworld"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// TestLive is the guide's DVP runner (dvpworld) on a real apiserver, its
// plugin's identity the guide's ServiceAccount: each case changes one thing
// and dvp-rbac must conclude exactly this for the runner "dvp".
func TestLive(t *testing.T) {
	env := testenv.Start(t)
	dvpworld.ApplyCRDs(t, env)
	for i, tc := range []struct {
		name  string
		shape dvpworld.Shape
		want  checktest.ResultWant
	}{
		{name: "healthy", want: checktest.ResultWant{Status: checks.StatusPass}},
		{name: "role-without-patch", shape: dvpworld.Shape{Role: map[string][]string{"virtualmachinepools": {"get"}}},
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error, Says: []string{
				`may not patch virtualmachinepools.virtualization.deckhouse.io in namespace "dvp-rbac-1"`,
				`cannot patch resource "virtualmachinepools"`, "kind: ServiceAccount, name: code-runner"}}}}},
		{name: "plugin-kubeconfig-without-rights", shape: dvpworld.Shape{PluginKubeconfig: true},
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error, Says: []string{
				"identity dvp-plugin may not", "get virtualmachinepools", "patch virtualmachinepools", "get virtualmachines",
				"list virtualmachines", "delete virtualmachines", "{kind: User, name: dvp-plugin}"}}}}},
		{name: "plugin-without-identity", shape: dvpworld.Shape{Outside: true},
			want: checktest.ResultWant{Status: checks.StatusSkipped, Reason: "the plugin has no identity (see dvp-pool)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := dvpworld.Lay(t, env.WithT(t), "dvp-rbac-"+strconv.Itoa(i), tc.shape)
			rs := checktest.Check(t, dvprbac.Check, checktest.Root(w.Root.Dir),
				checktest.Env(func(e *hostio.Env) { e.KubeconfigPath = dvpworld.OperatorKubeconfig }))
			tc.want.Runner = 1
			checktest.WantResults(t, rs, tc.want)
			for _, r := range rs {
				for _, secret := range w.Secrets() {
					if strings.Contains(checktest.Text(r), secret) {
						t.Errorf("the result carries key material %q", secret)
					}
				}
			}
		})
	}
}
