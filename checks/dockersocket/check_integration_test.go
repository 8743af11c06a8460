//go:build integration

package dockersocket_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dockersocket"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestLive judges a real Docker Engine (Debian's docker.io) listening on
// /var/run/docker.sock inside the host's root, and a socket file nothing
// listens on, as the Deckhouse document's runner container sees them.
func TestLive(t *testing.T) {
	h := testenv.StartDockerHost(t)
	check := func(t *testing.T, root *testroot.Root) checks.CheckResult {
		return checktest.ForRunner(t, checktest.Check(t, dockersocket.Check, checktest.Root(root.Dir)), 1)
	}
	config := testroot.DeckhouseDockerConfig("v19.3.1")

	t.Run("group-add", func(t *testing.T) {
		h.Root.DockerRunner(config, fmt.Sprintf("1001 %d", h.Group))
		r := check(t, h.Root)
		checktest.WantStatus(t, r, checks.StatusPass, "")
		checktest.WantNoFinding(t, r)
	})

	t.Run("socket-not-accessible", func(t *testing.T) {
		// The document's docker run without --group-add: the runner's
		// only group is its own.
		h.Root.DockerRunner(config, "1001")
		r := check(t, h.Root)
		checktest.WantStatus(t, r, checks.StatusFail, "")
		if len(r.Findings) != 1 {
			t.Fatalf("want one finding:\n%s", checktest.Text(r))
		}
		checktest.WantFinding(t, r, checks.Critical, "may not write to /var/run/docker.sock",
			"permission denied while trying to connect to the docker API at unix:///var/run/docker.sock",
			`--group-add "$(stat -c %g /var/run/docker.sock)"`)
	})

	t.Run("daemon-not-answering", func(t *testing.T) {
		// A socket file with nothing listening: what a crashed daemon leaves.
		dead := testroot.New(t)
		dead.Write("/etc/passwd", testroot.DockerPasswd, 0o644)
		p := filepath.Join(dead.Dir, "var/run/docker.sock")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
		dead.Chown("/var/run/docker.sock", 0, h.Group)
		dead.Chmod("/var/run/docker.sock", 0o660)
		dead.DockerRunner(config, fmt.Sprintf("1001 %d", h.Group))
		r := check(t, dead)
		checktest.WantStatus(t, r, checks.StatusFail, "")
		if len(r.Findings) != 1 {
			t.Fatalf("want one finding:\n%s", checktest.Text(r))
		}
		checktest.WantFinding(t, r, checks.Critical, "does not answer",
			"Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
	})

	t.Run("daemon-hung", func(t *testing.T) {
		// The real daemon stopped (SIGSTOP): its socket accepts and nothing
		// answers. The run's --timeout (3s) is shorter than one API call's
		// bound (8s); the probe's own deadline ends first, so it is a finding.
		h.Root.DockerRunner(config, fmt.Sprintf("1001 %d", h.Group))
		h.Daemon.Freeze(t)
		start := time.Now()
		r := checktest.ForRunner(t, checktest.Check(t, dockersocket.Check, checktest.Root(h.Root.Dir), checktest.Timeout(3*time.Second)), 1)
		if took := time.Since(start); took >= 3*time.Second {
			t.Errorf("the run took %s, not within its 3s --timeout", took)
		}
		checktest.WantStatus(t, r, checks.StatusFail, "")
		checktest.WantFinding(t, r, checks.Critical, "does not answer", "GET /_ping got no answer within",
			"Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
	})
}
