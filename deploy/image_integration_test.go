//go:build integration

package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// imageVersion is the version the test stamps into the image it builds.
const imageVersion = "v0.0.0-imagetest"

// builtImage is an image scripts/image.sh built on a dockerd of the test's
// own, and that daemon.
type builtImage struct {
	ref       string
	dockerBin string // the docker client
	host      string // its --host: the test's dockerd
	docker    func(t *testing.T, args ...string) (stdout string, code int)
}

// buildImage runs scripts/image.sh, as the docs say to build the image,
// against a real dockerd the test starts on a socket of its own.
func buildImage(t *testing.T) *builtImage {
	t.Helper()
	d := testenv.StartDockerd(t, "")
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Fatalf("the docker client is needed (Debian's docker.io; scripts/test-all.sh installs it): %v", err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DOCKER_HOST=unix://" + d.Socket,
		"DOCKER_CONFIG=" + t.TempDir(), "VERSION=" + imageVersion, "IMAGE=doctor-imagetest",
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOTOOLCHAIN=local"}
	cmd := exec.Command("bash", "../scripts/image.sh")
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, errb.String())
	}
	ref := strings.TrimSpace(out.String())
	if ref != "doctor-imagetest:"+imageVersion {
		t.Fatalf("scripts/image.sh printed %q, want doctor-imagetest:%s", ref, imageVersion)
	}
	return &builtImage{ref: ref, dockerBin: docker, host: "unix://" + d.Socket, docker: func(t *testing.T, args ...string) (string, int) {
		t.Helper()
		c := exec.Command(docker, args...)
		c.Env = env
		var so, se bytes.Buffer
		c.Stdout, c.Stderr = &so, &se
		err := c.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return so.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, se.String())
		}
		return so.String(), 0
	}}
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// The image scripts/image.sh builds holds the static binary stamped with
// its version, runs as the non-root user 65532 with no shell, and answers a
// shipped fixture as the binary does on the host.
func TestImage(t *testing.T) {
	img := buildImage(t)

	inspect, code := img.docker(t, "image", "inspect", img.ref)
	if code != 0 {
		t.Fatalf("docker image inspect: exit %d", code)
	}
	var meta []struct {
		Config struct {
			User       string
			Entrypoint []string
		}
		RootFS struct{ Layers []string }
	}
	if err := json.Unmarshal([]byte(inspect), &meta); err != nil || len(meta) != 1 {
		t.Fatalf("docker image inspect: %v\n%s", err, inspect)
	}
	if meta[0].Config.User != "65532:65532" || strings.Join(meta[0].Config.Entrypoint, " ") != "/usr/local/bin/doctor" {
		t.Errorf("the image runs %v as %q, want /usr/local/bin/doctor as 65532:65532", meta[0].Config.Entrypoint, meta[0].Config.User)
	}
	if out, code := img.docker(t, "run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", img.ref, "-c", "true"); code == 0 {
		t.Errorf("the image has a shell: %s", out)
	}

	out, code := img.docker(t, "run", "--rm", "--network", "none", img.ref, "version")
	if code != 0 || !strings.HasPrefix(out, "doctor "+imageVersion+"\n") {
		t.Errorf("doctor version in the image: exit %d\n%s", code, out)
	}

	// The README's fixture, as root reads a host (doctor runs as root on
	// the runner's host; the fixture's config.toml is root's, 0600).
	dir := filepath.Join("..", "testdata", "fixtures", "guide-config-as-is")
	sc := fixture.Load(t, dir)
	root := fixture.LayRoot(t, dir, sc)
	args := append([]string{"run", "--rm", "--network", "none", "--user", "0:0", "--read-only",
		"-v", root + ":/fixture:ro", img.ref}, sc.RunArgs(dir, "/fixture")...)
	out, code = img.docker(t, append(args, "-o", "json")...)
	var rep struct {
		Findings []struct{ Check string }
		Summary  struct{ ExitCode int }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor run in the image: exit %d, not JSON: %v\n%s", code, err, out)
	}
	if code != sc.Want.Exit || rep.Summary.ExitCode != sc.Want.Exit || len(rep.Findings) == 0 || rep.Findings[0].Check != sc.Want.Top {
		t.Errorf("doctor run in the image: exit %d, top %v; the fixture wants exit %d, top %s", code, rep.Findings, sc.Want.Exit, sc.Want.Top)
	}
}
