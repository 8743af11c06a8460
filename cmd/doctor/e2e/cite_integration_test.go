//go:build integration

package e2e

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestAPIFindingsCiteTheEffectiveCluster: on a real apiserver whose runner
// namespace is missing, the findings of the checks that read the cluster
// name the cluster they read and the rule, context and file that chose it,
// in every output format, without any check adding it (the engine does:
// APIClientFact's Cites); runReport's assertCitesCluster holds every
// integration scenario to the same. An offline run of the same host says
// nothing of it: offline output is unchanged.
func TestAPIFindingsCiteTheEffectiveCluster(t *testing.T) {
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin() // no gitlab-runner namespace: namespace's error
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour)))
	args := []string{"run", "--root", root.Dir, "--timeout", "60s", "--skip", "gitlab-reachability"}

	rep, _ := runReport(t, append(args, "-o", "json")...)
	want := fmt.Sprintf("effective cluster https://127.0.0.1:%d: kubeconfig: host is empty and KUBERNETES_SERVICE_HOST and _PORT are not in the runner's environment", env.Port)
	provenance := []string{want, `context "tenant-ci" (the kubeconfig's current-context)`,
		"cluster defined in " + testroot.KubeconfigPath, "kubeconfig path list from KUBECONFIG in /proc/4242/environ"}
	cited := 0
	for _, f := range rep.Findings {
		i := slices.IndexFunc(f.Evidence, kubefacts.CitesEffectiveCluster)
		if i < 0 {
			continue
		}
		cited++
		e := f.Evidence[i]
		if e.Source != testroot.KubeconfigPath {
			t.Errorf("%s cites the effective cluster at %q, want the kubeconfig that holds it, %s", f.Check, e.Source, testroot.KubeconfigPath)
		}
		for _, s := range provenance {
			if !strings.Contains(e.Detail, s) {
				t.Errorf("%s's effective cluster %q does not say %q", f.Check, e.Detail, s)
			}
		}
	}
	if cited == 0 || !slices.ContainsFunc(rep.Findings, func(f report.Finding) bool { return f.Check == "namespace" }) {
		t.Fatalf("no finding of namespace cites the effective cluster (%d cite it):\n%s", cited, summarize(rep))
	}
	// Every format that shows evidence (table shows none, at any width).
	for _, format := range []string{"yaml", "wide", "markdown"} {
		var out, errb bytes.Buffer
		cli.Main(append(args, "-o", format), cli.IO{Out: &out, Err: &errb, Width: 100000, Getenv: func(string) string { return "" }})
		// The renderers wrap long evidence: compared with its spaces folded,
		// and wide's column (80 wide at most) only by its first words.
		short := fmt.Sprintf("effective cluster https://127.0.0.1:%d: kubeconfig: host is empty", env.Port)
		if format == "wide" {
			short = "effective cluster"
		}
		shown := out.String()
		if format == "markdown" {
			shown = strings.ReplaceAll(shown, "`", "") // a URL is code there
		}
		if !strings.Contains(strings.Join(strings.Fields(shown), " "), short) {
			t.Errorf("-o %s does not show the effective cluster %q:\n%s%s", format, short, out.String(), errb.String())
		}
	}
	offline, text := runReport(t, append(args, "-o", "json", "--offline")...)
	if strings.Contains(text, "effective cluster") {
		t.Errorf("an offline run cites the effective cluster:\n%s", summarize(offline))
	}
}
