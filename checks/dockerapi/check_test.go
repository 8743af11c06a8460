package dockerapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dockerapi"
	"github.com/socialwebcomputer/doctor/checks/facts/docker"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// daemon answers as a Docker Engine of API range [min, max] does: /_ping,
// /version, and any /v<X>/... through moby's version middleware
// (api/server/middleware/version.go, v20.10.24): a version below min or
// above max is refused with 400 and its message. It records the versions
// it was asked with.
type daemon struct {
	min, max string
	asked    []string
}

var versioned = regexp.MustCompile(`^/v([0-9.]+)(/.*)$`)

func (d *daemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if m := versioned.FindStringSubmatch(path); m != nil {
		d.asked = append(d.asked, m[1])
		w.Header().Set("Content-Type", "application/json")
		switch {
		case docker.APILess(m[1], d.min):
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"message": fmt.Sprintf("client version %s is too old. Minimum supported API version is %s, please upgrade your client to a newer version", m[1], d.min)})
			return
		case docker.APILess(d.max, m[1]):
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"message": fmt.Sprintf("client version %s is too new. Maximum supported API version is %s", m[1], d.max)})
			return
		}
		path = m[2]
	}
	switch path {
	case "/_ping":
		fmt.Fprint(w, "OK")
	case "/version":
		fmt.Fprintf(w, `{"Version":"29.0.1","ApiVersion":%q,"MinAPIVersion":%q,"Os":"linux","Arch":"amd64","KernelVersion":"6.1.0"}`, d.max, d.min)
	default:
		http.NotFound(w, r)
	}
}

// host is a Docker runner of version (a stamped binary) whose environment
// holds env, with helper_image set when helper is not "", and a daemon on
// the root's /var/run/docker.sock.
func host(t *testing.T, version string, env map[string]string, helper string, d http.Handler) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	if env == nil {
		env = map[string]string{}
	}
	env["PATH"] = "/usr/bin:/bin"
	r.Runner(4242, 0, env, "/usr/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
	if version != "" {
		r.StampedRunner(version)
	}
	cfg := `concurrent = 1

[[runners]]
  name = "docker"
  url = "https://gitlab.example.invalid"
  token = "glrt-test"
  executor = "docker"
  [runners.docker]
    image = "alpine:3"
`
	if helper != "" {
		cfg += "    helper_image = \"" + helper + "\"\n"
	}
	r.Write("/etc/gitlab-runner/config.toml", cfg, 0o600)
	p := filepath.Join(r.Dir, "var/run/docker.sock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: d}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return r
}

func check(t *testing.T, r *testroot.Root) checks.CheckResult {
	t.Helper()
	return checktest.ForRunner(t, checktest.Check(t, dockerapi.Check, checktest.Root(r.Dir)), 1)
}

// The case: Docker 29 raised MinAPIVersion to 1.44, and a runner
// built with docker/docker v24 speaks 1.43: the daemon, asked as that
// client, refuses it, and the finding quotes it.
func TestDocker29RefusesARunnerOf143(t *testing.T) {
	d := &daemon{min: "1.44", max: "1.52"}
	r := check(t, host(t, "17.4.2", nil, "", d))
	checktest.WantStatus(t, r, checks.StatusFail, "")
	checktest.WantFinding(t, r, checks.Critical, "Docker client speaks API 1.43, below the daemon's MinAPIVersion 1.44",
		`Error response from daemon: client version 1.43 is too old. Minimum supported API version is 1.44, please upgrade your client to a newer version`,
		"gitlab-runner 17.4.2: its go.mod requires github.com/docker/docker v24.0.9+incompatible",
		"GET /v1.43/version on unix:///var/run/docker.sock", "ApiVersion 1.52, MinAPIVersion 1.44",
		"helper_image not set: the runner's own version: gitlab-runner-helper 17.4.2",
		"Upgrade the runner to gitlab-runner v17.5.0 or later (built with github.com/docker/docker v25.0.6+incompatible, API 1.44)",
		"DOCKER_MIN_API_VERSION=1.43")
	if strings.Join(d.asked, ",") != "1.43" {
		t.Errorf("the daemon was asked as %v, want as 1.43 once", d.asked)
	}
}

func TestInRangeClientsPass(t *testing.T) {
	for _, tc := range []struct{ version, min, max string }{
		{"17.5.0", "1.44", "1.52"}, // v25.0.6: 1.44, the new minimum
		{"19.3.1", "1.44", "1.52"}, // the moby client, 1.55 negotiated down to 1.52
		{"19.3.0", "1.12", "1.41"}, // Debian's 20.10: negotiated down, above the client's 1.40
		{"16.0.0", "1.12", "1.41"},
	} {
		t.Run(tc.version+"-"+tc.max, func(t *testing.T) {
			d := &daemon{min: tc.min, max: tc.max}
			r := check(t, host(t, tc.version, nil, "", d))
			checktest.WantStatus(t, r, checks.StatusPass, "")
			checktest.WantNoFinding(t, r)
			if len(d.asked) != 0 {
				t.Errorf("a client in range made doctor ask as %v", d.asked)
			}
		})
	}
}

// DOCKER_API_VERSION pins the version: below the minimum, and above the
// maximum, where no negotiation lowers it.
func TestPinnedVersions(t *testing.T) {
	d := &daemon{min: "1.12", max: "1.41"}
	r := check(t, host(t, "19.3.0", map[string]string{"DOCKER_API_VERSION": "1.11"}, "", d))
	checktest.WantFinding(t, r, checks.Critical, "client version 1.11 is too old. Minimum supported API version is 1.12",
		"/proc/4242/environ: DOCKER_API_VERSION=1.11", "Remove DOCKER_API_VERSION from the runner's environment")

	d = &daemon{min: "1.12", max: "1.41"}
	r = check(t, host(t, "19.3.0", map[string]string{"DOCKER_API_VERSION": "1.43"}, "", d))
	checktest.WantFinding(t, r, checks.Critical, "above the daemon's ApiVersion 1.41", "client version 1.43 is too new. Maximum supported API version is 1.41")
}

// The moby client of v19.2 and later refuses a daemon older than 1.40:
// the words are the client's.
func TestOldDaemonRefusedByTheMobyClient(t *testing.T) {
	d := &daemon{min: "1.12", max: "1.39"}
	r := check(t, host(t, "19.3.0", nil, "", d))
	checktest.WantFinding(t, r, checks.Error, "API version 1.39 is not supported by this client: the minimum supported API version is 1.40")
	// docker/docker clients have no such minimum.
	r = check(t, host(t, "18.9.0", nil, "", &daemon{min: "1.12", max: "1.39"}))
	checktest.WantStatus(t, r, checks.StatusPass, "")
}

// A helper_image of another release is named in the evidence, with the
// client its helper is built with.
func TestHelperImageIsCompared(t *testing.T) {
	d := &daemon{min: "1.44", max: "1.52"}
	r := check(t, host(t, "16.11.1", nil, "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v17.5.0", d))
	checktest.WantFinding(t, r, checks.Critical, "client version 1.43 is too old",
		"helper_image registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v17.5.0: gitlab-runner-helper 17.5.0, built with github.com/docker/docker v25.0.6+incompatible (API 1.44)")
}

func TestUnknownVersionIsUnknown(t *testing.T) {
	r := check(t, host(t, "", nil, "", &daemon{min: "1.44", max: "1.52"}))
	checktest.WantStatus(t, r, checks.StatusUnknown, "the runner's version is unknown")
	r = check(t, host(t, "14.10.1", nil, "", &daemon{min: "1.44", max: "1.52"}))
	checktest.WantStatus(t, r, checks.StatusUnknown, "older than v15.0.0")
}

// The table of clients is what the runner's go.mod requires at every
// release tag, and what moby's source says each client speaks
// (testdata/*.txt, extracted from the two repositories' tags).
func TestClientTableIsTheRunnersGoMod(t *testing.T) {
	apis := map[string][2]string{}
	lines(t, "../facts/docker/testdata/moby-client-api.txt", func(f []string) {
		apis[f[0]+" "+f[1]] = [2]string{f[2], strings.TrimPrefix(f[3], "-")}
	})
	n := 0
	lines(t, "../facts/docker/testdata/runner-docker-client.txt", func(f []string) {
		n++
		c, ok := docker.ClientAPIOf(f[0])
		if !ok || c.Module != f[1] || c.Version != f[2] {
			t.Errorf("%s: go.mod requires %s %s; the table says %+v", f[0], f[1], f[2], c)
			return
		}
		want, ok := apis[f[1]+" "+f[2]]
		if !ok || c.API != want[0] || c.MinAPI != want[1] {
			t.Errorf("%s %s speaks %v by moby's source; the table says %s, min %q", f[1], f[2], want, c.API, c.MinAPI)
		}
	})
	if n < 160 {
		t.Errorf("only %d release tags", n)
	}
}

func lines(t *testing.T, path string, each func([]string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		each(strings.Fields(l))
	}
}
