//go:build integration

package helperimage_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/helperimage"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestLiveDocker judges a Docker runner's helper_image against its
// runner's version (a binary stamped 19.3.1) and a real Docker Engine
// (Debian's docker.io, amd64 on this machine: testenv.md).
func TestLiveDocker(t *testing.T) {
	h := testenv.StartDockerHost(t)
	groups := fmt.Sprintf("1001 %d", h.Group)
	check := func(t *testing.T, config string) checks.CheckResult {
		h.Root.DockerRunner(config, groups)
		return checktest.ForRunner(t, checktest.Check(t, helperimage.Check, checktest.Root(h.Root.Dir)), 1)
	}

	t.Run("matching", func(t *testing.T) {
		r := check(t, testroot.DeckhouseDockerConfig("v19.3.1"))
		checktest.WantStatus(t, r, checks.StatusPass, "")
		checktest.WantNoFinding(t, r)
	})

	t.Run("version-mismatch", func(t *testing.T) {
		r := check(t, testroot.DeckhouseDockerConfig("v19.2.0"))
		checktest.WantStatus(t, r, checks.StatusFail, "")
		if len(r.Findings) != 1 {
			t.Fatalf("want one finding:\n%s", checktest.Text(r))
		}
		checktest.WantFinding(t, r, checks.Warning, "runs gitlab-runner 19.3.1, but its helper_image", "is v19.2.0", "runner-helper:v19.3.1")
	})

	t.Run("another-arch", func(t *testing.T) {
		// An arm64 helper on the amd64 daemon: the helper cannot start.
		cfg := strings.Replace(testroot.DeckhouseDockerConfig("v19.3.1"), "registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner-helper:v19.3.1",
			"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:arm64-v19.3.1", 1)
		r := check(t, cfg)
		checktest.WantStatus(t, r, checks.StatusFail, "")
		if len(r.Findings) != 1 {
			t.Fatalf("want one finding:\n%s", checktest.Text(r))
		}
		checktest.WantFinding(t, r, checks.Error, "is built for linux/arm64, but its Docker daemon runs amd64", "Docker Engine 20.10.24")
	})
}

// TestLiveNodeArch judges a Kubernetes runner's helper image against the
// architecture of the nodes of a real apiserver: the amd64-only Deckhouse
// helper, and the runner's own default (x86_64 unless node_selector says
// otherwise), on an arm64 node.
func TestLiveNodeArch(t *testing.T) {
	for name, tc := range map[string]struct {
		helper string
		says   []string
	}{
		"deckhouse-helper": {`    helper_image = "registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner-helper:v19.3.1"` + "\n",
			[]string{"runner-helper:v19.3.1 is built for linux/amd64, but jobs may land on nodes of arm64 (arm-1)"}},
		"default-helper": {"",
			[]string{"gitlab-runner-helper:x86_64-v19.3.1 is built for linux/amd64, but jobs may land on nodes of arm64 (arm-1)",
				`"kubernetes.io/arch" = "amd64"`}},
	} {
		t.Run(name, func(t *testing.T) {
			live := checktest.Cluster(t, strings.Replace(testroot.GuideConfig, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n"+tc.helper, 1))
			live.Root.StampedRunner("19.3.1")
			st := testenv.ReadyNodeStatus("4", "8Gi", testenv.FreePort(t))
			st.NodeInfo.Architecture = "arm64"
			live.CreateNode("arm-1", st)
			r := checktest.ForRunner(t, live.Check(t, helperimage.Check), 1)
			checktest.WantStatus(t, r, checks.StatusFail, "")
			if len(r.Findings) != 1 {
				t.Fatalf("want one finding:\n%s", checktest.Text(r))
			}
			checktest.WantFinding(t, r, checks.Error, tc.says...)
		})
	}
}
