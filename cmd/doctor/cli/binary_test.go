package cli

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// buildDoctor builds cmd/doctor into a directory of its own (so that
// directory can go first on PATH) and returns the binary's path. It is
// built with -buildvcs=true, as go build in a checkout stamps it.
func buildDoctor(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "doctor")
	out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "..").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/doctor: %v\n%s", err, out)
	}
	return bin
}
