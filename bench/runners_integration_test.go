//go:build integration

package bench

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// runnersConfig is the guide's config.toml with its [[runners]] repeated n
// times, each named runner-<i>; with spread each has its own namespace
// (created by the caller), else all share the guide's.
func runnersConfig(n int, spread bool) string {
	head, block, ok := strings.Cut(testroot.GuideConfig, "[[runners]]")
	if !ok {
		panic("GuideConfig has no [[runners]]")
	}
	var sb strings.Builder
	sb.WriteString(head)
	for i := 1; i <= n; i++ {
		b := strings.Replace(block, `name = "kcp-tenant-kubernetes"`, fmt.Sprintf(`name = "runner-%d"`, i), 1)
		if spread {
			b = strings.Replace(b, `namespace = "gitlab-runner"`, fmt.Sprintf(`namespace = "%s"`, spreadNS(i)), 1)
		}
		sb.WriteString("[[runners]]" + b)
	}
	return sb.String()
}

func spreadNS(i int) string {
	if i == 1 {
		return runnerNS
	}
	return fmt.Sprintf("gitlab-runner-%d", i)
}

// TestBenchRunners measures N = 1, 3 and 10 Kubernetes runners on one
// cluster: wall time, and API requests from the audit log, with the
// runners in one namespace and in N namespaces. The bound: one
// extra request per extra namespace, and no extra round trip.
func TestBenchRunners(t *testing.T) {
	if os.Getenv("DOCTOR_BENCH") != "1" {
		t.Skip("benchmark: run bench/run.sh (it sets DOCTOR_BENCH=1)")
	}
	b := setup(t)
	defer seedSmall(t, b.env)()
	for i := 2; i <= 10; i++ {
		b.env.EnsureNamespace(spreadNS(i))
	}
	type result struct {
		n                 int
		spread            bool
		wall              float64
		requests, lists   int
		byKind            string
		dryRuns           int
		findings, runners int
	}
	var rows []result
	for _, spread := range []bool{false, true} {
		for _, n := range []int{1, 3, 10} {
			if err := os.WriteFile(b.root+"/etc/gitlab-runner/config.toml", []byte(runnersConfig(n, spread)), 0o600); err != nil {
				t.Fatal(err)
			}
			var walls []float64
			var first doctorRun
			for i := 0; i < 5; i++ {
				r := b.runDoctor()
				if i == 0 {
					first = r
				}
				walls = append(walls, r.Wall.Seconds())
			}
			sort.Float64s(walls)
			kinds := map[string]int{}
			lists := 0
			for _, e := range first.Requests {
				kinds[e.Verb+" "+resourceOf(e.RequestURI)]++
				if e.Verb == "list" {
					lists++
				}
			}
			rows = append(rows, result{n: n, spread: spread, wall: median(walls), requests: len(first.Requests), lists: lists,
				byKind: fmt.Sprint(kinds), dryRuns: kinds["create pods"], findings: len(first.Report.Findings), runners: len(first.Report.Runners)})
			if len(first.Report.Runners) != n {
				t.Errorf("N=%d: the report names %d runners", n, len(first.Report.Runners))
			}
		}
	}
	var sb strings.Builder
	sb.WriteString("| runners | namespaces | doctor wall, median of 5 | API requests | of which lists | requests by verb and resource |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		ns := 1
		if r.spread {
			ns = r.n
		}
		fmt.Fprintf(&sb, "| %d | %d | %s | %d | %d | %s |\n", r.n, ns, ms(r.wall), r.requests, r.lists, r.byKind)
	}
	// The bound (issue 13): at most one extra request per extra namespace,
	// and, beside job-admission's dry run (issue 31: one dryRun=All create
	// of each Kubernetes runner's job pod), none per extra runner in a
	// namespace already read.
	base := map[bool]int{}
	for _, r := range rows {
		if r.n == 1 {
			base[r.spread] = r.requests
		}
	}
	for _, r := range rows {
		extraNS := 0
		if r.spread {
			extraNS = r.n - 1
		}
		if r.dryRuns != r.n {
			t.Errorf("N=%d spread=%v: %d dry runs of the job pod, want one per runner", r.n, r.spread, r.dryRuns)
		}
		if limit := base[r.spread] + extraNS + (r.n - 1); r.requests > limit {
			t.Errorf("N=%d spread=%v: %d requests, more than %d (one per extra namespace and one dry run per extra runner)", r.n, r.spread, r.requests, limit)
		}
	}
	t.Logf("RESULTS (runners)\n%s", sb.String())
}

// resourceOf is the last path segment of a request, without its query:
// "pods", "exec", "selfsubjectreviews".
func resourceOf(uri string) string {
	p, _, _ := strings.Cut(uri, "?")
	return p[strings.LastIndex(p, "/")+1:]
}
