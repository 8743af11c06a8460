package hostfacts

import (
	"strings"
	"testing"
)

// A runner pod's table as a node with containerd shows it: the overlay
// root, an emptyDir bind-mounted from the kubelet's directory, a secret on
// tmpfs, and a CSI block volume; one mount point has an escaped space.
const podMountinfo = `2553 2474 0:312 / / rw,relatime master:1068 - overlay overlay rw,lowerdir=/var/lib/containerd/l1,upperdir=/var/lib/containerd/u1,workdir=/var/lib/containerd/w1
2554 2553 0:316 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
2560 2553 253:1 /var/lib/kubelet/pods/7d0c/volumes/kubernetes.io~empty-dir/config /etc/gitlab-runner rw,relatime - ext4 /dev/vda1 rw
2561 2553 0:298 / /ssh ro,relatime - tmpfs tmpfs rw,size=4194304k
2562 2553 252:16 / /home/gitlab-runner/state rw,relatime - ext4 /dev/rbd0 rw
2563 2553 252:17 / /srv/with\040space rw,relatime - ext4 /dev/rbd1 rw
`

func TestMountinfo(t *testing.T) {
	list, err := ParseMountinfo(podMountinfo)
	if err != nil {
		t.Fatal(err)
	}
	m := &Mounts{List: list}
	for _, tc := range []struct {
		path, point, ephemeral string
	}{
		{"/home/gitlab-runner/state/abc", "/home/gitlab-runner/state", ""},
		{"/home/gitlab-runner/other", "/", "overlay"},
		{"/etc/gitlab-runner/.taskscaler", "/etc/gitlab-runner", "emptyDir"},
		{"/etc/gitlab-runnerx", "/", "overlay"},
		{"/ssh/id_ed25519", "/ssh", "tmpfs"},
		{"/srv/with space/x", "/srv/with space", ""},
	} {
		got := m.At(tc.path)
		if got == nil || got.Point != tc.point {
			t.Errorf("%s: mount %+v, want the one at %s", tc.path, got, tc.point)
			continue
		}
		if e := got.Ephemeral(); (tc.ephemeral == "") != (e == "") || !strings.Contains(e, tc.ephemeral) {
			t.Errorf("%s: ephemeral %q, want %q", tc.path, e, tc.ephemeral)
		}
	}
	if _, err := ParseMountinfo("1 2 3:4 / /x rw no-separator\n"); err == nil {
		t.Error("a line without the \" - \" separator parsed")
	}
}
