package kube_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoctorDoesNotLinkTheTypedClientset: the reason package kube exists.
// Any import of k8s.io/client-go/kubernetes (a typed client, its scheme, a
// helper built on them) brings back its start-up cost to every run.
func TestDoctorDoesNotLinkTheTypedClientset(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/socialwebcomputer/doctor/cmd/doctor").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "k8s.io/client-go/kubernetes" || strings.HasPrefix(pkg, "k8s.io/client-go/kubernetes/") {
			t.Errorf("cmd/doctor links %s: use checks/kube (and kubefake in tests)", pkg)
		}
	}
}
