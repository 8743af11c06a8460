//go:build integration

package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// DockerHost is a host of the Deckhouse document's Docker runner: its
// /etc/passwd, a gitlab-runner stamped 19.3.1, and a real Docker Engine on
// the root's /var/run/docker.sock, root:<Group> 0660 as the docker group
// leaves it. The runner itself is the test's (testroot.Root.DockerRunner).
type DockerHost struct {
	Root   *testroot.Root
	Daemon *Dockerd
	// Group owns the socket: the docker group's gid, or 2375 where this
	// machine has none.
	Group int
}

// StartDockerHost starts a DockerHost for t (dockerd stops when t ends).
func StartDockerHost(t *testing.T) *DockerHost {
	t.Helper()
	root := testroot.New(t)
	root.Write("/etc/passwd", testroot.DockerPasswd, 0o644)
	root.StampedRunner("19.3.1")
	sock := filepath.Join(root.Dir, "var/run/docker.sock")
	d := StartDockerd(t, sock)
	t.Logf("dockerd /version: %.160s", d.Version(t))
	st, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	gid := int(st.Sys().(*syscall.Stat_t).Gid)
	if gid == 0 {
		// No docker group on this machine: dockerd left the socket
		// root:root; give it a group of its own, as the docker group is.
		gid = 2375
		if err := os.Chown(sock, 0, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(sock, 0o660); err != nil {
		t.Fatal(err)
	}
	return &DockerHost{Root: root, Daemon: d, Group: gid}
}
