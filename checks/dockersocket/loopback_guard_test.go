package dockersocket_test

import (
	"os"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// TestMain keeps every dial of these tests on loopback (and unix sockets)
// under a plain go test too.
func TestMain(m *testing.M) {
	os.Setenv(checks.LoopbackOnlyVar, "1")
	os.Exit(m.Run())
}
