//go:build integration

package dvppool_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dvppool"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/dvpworld"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// TestLive is the guide's DVP runner (dvpworld) on a real apiserver with
// minimal virtualization CRDs, its plugin's identity a TokenRequest token
// of the guide's ServiceAccount: each case changes one thing and dvp-pool
// must conclude exactly this for the runner "dvp".
func TestLive(t *testing.T) {
	env := testenv.Start(t)
	dvpworld.ApplyCRDs(t, env)
	fails := func(sev checks.Severity, says ...string) checktest.ResultWant {
		return checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: sev, Says: says}}}
	}
	for i, tc := range []struct {
		name  string
		shape dvpworld.Shape
		want  checktest.ResultWant
	}{
		{name: "healthy", want: checktest.ResultWant{Status: checks.StatusPass}},
		{name: "pool-missing", shape: dvpworld.Shape{NoPool: true},
			want: fails(checks.Critical, "does not exist", "no job gets a VM", "scaleDownPolicy: Explicit", "ssh-keygen -y -f /ssh/id_ed25519")},
		{name: "scale-down-newest-first", shape: dvpworld.Shape{Pool: func(s map[string]any) { s["scaleDownPolicy"] = "NewestFirst" }},
			want: fails(checks.Error, "scaleDownPolicy NewestFirst, not Explicit", `"scaleDownPolicy":"Explicit"`)},
		{name: "replicas-over-max", shape: dvpworld.Shape{Pool: func(s map[string]any) { s["replicas"] = 7 }},
			want: fails(checks.Warning, "spec.replicas 7, more than max_instances 5")},
		{name: "key-mismatch", shape: dvpworld.Shape{OtherKey: true},
			want: fails(checks.Error, `does not authorize key_path's key for "gitlab-runner"`, "ssh-ed25519 SHA256:")},
		{name: "image-missing", shape: dvpworld.Shape{NoImage: true},
			want: fails(checks.Error, "VirtualImage ubuntu-2204, which does not exist in namespace")},
		{name: "vm-stuck", shape: dvpworld.Shape{StuckVM: true, Pool: func(s map[string]any) { s["replicas"] = 1 }},
			want: fails(checks.Error, "instance never becomes ready", "code-runner-x7k2q", "status.phase=Pending", "VirtualDiskReady=False")},
		// The guide's Role without patch is dvp-rbac's finding: the pool
		// itself is as it should be.
		{name: "role-without-patch", shape: dvpworld.Shape{Role: map[string][]string{"virtualmachinepools": {"get"}}},
			want: checktest.ResultWant{Status: checks.StatusPass}},
		{name: "plugin-kubeconfig-without-rights", shape: dvpworld.Shape{PluginKubeconfig: true},
			want: checktest.ResultWant{Status: checks.StatusUnknown, Reason: "may not get virtualmachinepools"}},
		{name: "plugin-without-identity", shape: dvpworld.Shape{Outside: true},
			want: fails(checks.Critical, "no identity", "unable to load in-cluster configuration")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := dvpworld.Lay(t, env.WithT(t), "dvp-pool-"+strconv.Itoa(i), tc.shape)
			rs := checktest.Check(t, dvppool.Check, checktest.Root(w.Root.Dir),
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
