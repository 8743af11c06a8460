package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoctorDoesNotLink keeps out of the binary the packages whose start-up
// cost every run would pay before its first byte goes to the cluster; each
// was measured (bench/RESULTS.md) and replaced.
func TestDoctorDoesNotLink(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/socialwebcomputer/doctor/cmd/doctor").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []struct{ prefix, instead string }{
		// Registers every API group of Kubernetes in its scheme at init.
		{"k8s.io/client-go/kubernetes", "checks/client/kube (and kubefake in tests)"},
		// The default registry's collectors at init, with procfs. What
		// runner-metrics links to parse the runner's /metrics is
		// prometheus/common's expfmt, with client_model and protobuf: their
		// package inits take 0.4 to 0.6 ms of the binary's 4.6 ms (GODEBUG=
		// inittrace=1 doctor version, summed over their packages, five runs).
		{"github.com/prometheus/client_golang/", "cmd/doctor/app/metrics' own text writer (client_golang is its tests' oracle)"},
		{"github.com/prometheus/procfs/", "nothing: it came with client_golang"},
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			p := strings.TrimSuffix(f.prefix, "/")
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				t.Errorf("cmd/doctor links %s: use %s", pkg, f.instead)
			}
		}
	}
}
