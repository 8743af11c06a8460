// Package tools finds the external programs a test needs. On a machine
// with only Go a missing one skips the test, naming the program and how to
// get it; under the README's full test command (scripts/test-all.sh sets
// DOCTOR_REQUIRE_TOOLS=1) or in CI (CI=true) a missing one fails it, so
// CI never passes without having run it.
package tools

import (
	"os"
	"os/exec"
	"testing"
)

// Required says whether a missing tool fails the test instead of skipping it.
func Required() bool {
	return os.Getenv("DOCTOR_REQUIRE_TOOLS") == "1" || os.Getenv("CI") == "true"
}

// Need is the path of the program name, or the end of the test: skipped
// with the program's name and how to get it, or failed when Required.
func Need(t testing.TB, name, how string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	Missing(t, name+" is not installed ("+how+")")
	return ""
}

// Missing ends t for want of something a test needs: a skip, or a failure
// when Required.
func Missing(t testing.TB, why string) {
	t.Helper()
	if Required() {
		t.Fatal(why)
	}
	t.Skip(why)
}
