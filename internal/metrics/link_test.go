package metrics

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoctorDoesNotLinkClientGolang: why text.go writes the format itself.
// client_golang's init registers the default registry's collectors, and it
// brings procfs and protobuf: about 2 ms of every run, for a file only
// --textfile writes. The tests use it as the oracle.
func TestDoctorDoesNotLinkClientGolang(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/socialwebcomputer/doctor/cmd/doctor").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/prometheus/") || strings.HasPrefix(pkg, "google.golang.org/protobuf/") {
			t.Errorf("cmd/doctor links %s", pkg)
		}
	}
}
