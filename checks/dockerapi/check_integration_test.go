//go:build integration

package dockerapi_test

import (
	"fmt"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dockerapi"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestLive asks a real Docker Engine (Debian's docker.io, 20.10: API 1.41,
// MinAPIVersion 1.12) its range, for the Deckhouse document's runner
// (gitlab-runner 19.3.1) in its container. Its moby client negotiates down
// to 1.41 and passes; a client pinned below the daemon's minimum (or above
// its maximum) with DOCKER_API_VERSION, as the runner honours it, is
// refused, and the finding quotes the real daemon's words, as the daemon
// says them to a request of that version.
func TestLive(t *testing.T) {
	h := testenv.StartDockerHost(t)
	config := testroot.DeckhouseDockerConfig("v19.3.1")
	groups := fmt.Sprintf("1001 %d", h.Group)
	check := func(t *testing.T, env string) checks.CheckResult {
		h.Root.DockerRunner(config, groups)
		if env != "" {
			h.Root.Write("/proc/4242/environ", "HOME=/home/gitlab-runner\x00PATH=/usr/local/bin:/usr/bin:/bin\x00"+env+"\x00", 0o400)
		}
		return checktest.ForRunner(t, checktest.Check(t, dockerapi.Check, checktest.Root(h.Root.Dir)), 1)
	}

	t.Run("negotiated", func(t *testing.T) {
		r := check(t, "")
		checktest.WantStatus(t, r, checks.StatusPass, "")
		checktest.WantNoFinding(t, r)
	})

	t.Run("pinned-below-the-minimum", func(t *testing.T) {
		r := check(t, "DOCKER_API_VERSION=1.11")
		checktest.WantStatus(t, r, checks.StatusFail, "")
		checktest.WantFinding(t, r, checks.Critical, "Docker client speaks API 1.11, below the daemon's MinAPIVersion 1.12",
			"Error response from daemon: client version 1.11 is too old. Minimum supported API version is 1.12, please upgrade your client to a newer version",
			"GET /v1.11/version on unix:///var/run/docker.sock: 400 client version 1.11 is too old",
			"DOCKER_API_VERSION=1.11", "ApiVersion 1.41, MinAPIVersion 1.12")
	})

	t.Run("pinned-above-the-maximum", func(t *testing.T) {
		r := check(t, "DOCKER_API_VERSION=1.43")
		checktest.WantFinding(t, r, checks.Critical, "above the daemon's ApiVersion 1.41",
			"client version 1.43 is too new. Maximum supported API version is 1.41")
	})
}
