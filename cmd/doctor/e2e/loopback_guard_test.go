package e2e

import (
	"os"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// TestMain keeps every dial of these tests on loopback under a plain
// go test too, not only under scripts/test-all.sh: a setup that misleads a
// check into a production default fails instead of sending a packet off
// the machine.
func TestMain(m *testing.M) {
	os.Setenv(hostio.LoopbackOnlyVar, "1")
	os.Exit(m.Run())
}
