package runnermetrics_test

import (
	"os"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// TestMain keeps every dial of these tests on loopback (and unix sockets)
// under a plain go test too.
func TestMain(m *testing.M) {
	os.Setenv(hostio.LoopbackOnlyVar, "1")
	os.Exit(m.Run())
}
