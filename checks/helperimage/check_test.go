package helperimage_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/helperimage"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// root is a host whose runner binary is stamped with version (through
// -ldflags in its build info, as runnerversion reads it) and whose only
// runner has the given executor and table lines.
func root(t *testing.T, version, executor, table string) *testroot.Root {
	r := testroot.New(t)
	r.Runner(4242, 999, nil)
	if version != "" {
		bin := filepath.Join(r.Dir, "usr/bin/gitlab-runner")
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if version != "19.3.1" {
			t.Fatalf("the test binary is stamped 19.3.1, not %s", version)
		}
		b, err := os.ReadFile(runnerBinary)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.Write("/etc/gitlab-runner/config.toml", fmt.Sprintf(`[[runners]]
  name = "r"
  url = "https://gitlab.example.invalid"
  token = "glrt-test"
  executor = %q
  [runners.%s]
    image = "alpine:3"
%s`, executor, executor, table), 0o600)
	// The runner reads its own config.toml: doctor reads it as the runner.
	r.Chown("/etc/gitlab-runner/config.toml", 999, 999)
	return r
}

func run(t *testing.T, r *testroot.Root, offline bool) checks.CheckResult {
	t.Helper()
	res, err := checks.Run(context.Background(), &hostio.Env{Root: r.Dir, Offline: offline},
		[]*checks.Check{configdecode.Check, helperimage.Check}, checks.Options{Only: []string{helperimage.ID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Checks {
		if c.Check == helperimage.Check {
			return c
		}
	}
	t.Fatal("helper-image did not run")
	return checks.CheckResult{}
}

func TestDefaultTag(t *testing.T) {
	for v, want := range map[string]string{
		"19.3.0":                 helperimage.GitLabRegistryName + ":x86_64-v19.3.0",
		"19.4.0~pre.12.gd79f3e7": helperimage.GitLabRegistryName + ":x86_64-v19.4.0",
		"":                       helperimage.GitLabRegistryName + ":x86_64-latest",
	} {
		if got := helperimage.DefaultImage("amd64", v); got != want {
			t.Errorf("DefaultImage(amd64, %q) = %s, want %s", v, got, want)
		}
	}
	for ref, want := range map[string]string{
		helperimage.DeckhouseHelper + ":v19.3.1":                  "amd64",
		helperimage.GitLabRegistryName + ":arm64-v19.3.0":         "arm64",
		helperimage.GitLabRegistryName + ":ubuntu-x86_64-v19.3.0": "amd64",
		"registry.example.invalid/helper:v19.3.0":                 "",
	} {
		if got := helperimage.ImageArch(ref); got != want {
			t.Errorf("ImageArch(%s) = %q, want %q", ref, got, want)
		}
	}
}

func TestSameVersionPasses(t *testing.T) {
	r := root(t, "19.3.1", "docker", `    helper_image = "`+helperimage.DeckhouseHelper+`:v19.3.1"`+"\n")
	res := run(t, r, true)
	checktest.WantSays(t, res, checks.StatusPass)
	if len(res.Findings) != 0 {
		t.Errorf("want no findings:\n%s", checktest.Text(res))
	}
}

func TestVersionMismatchWarns(t *testing.T) {
	r := root(t, "19.3.1", "docker", `    helper_image = "`+helperimage.DeckhouseHelper+`:v19.2.0"`+"\n")
	checktest.WantSays(t, run(t, r, true), checks.StatusFail, "[warning]", "runs gitlab-runner 19.3.1, but its helper_image",
		"is v19.2.0", "[runners.docker]\nhelper_image = \""+helperimage.DeckhouseHelper+":v19.3.1\"")
}

func TestVariableFollowsRunner(t *testing.T) {
	r := root(t, "19.3.1", "kubernetes", `    helper_image = "`+helperimage.GitLabRegistryName+`:x86_64-v${CI_RUNNER_VERSION}"`+"\n")
	res := run(t, r, true)
	checktest.WantSays(t, res, checks.StatusPass)
	if len(res.Findings) != 0 {
		t.Errorf("want no findings:\n%s", checktest.Text(res))
	}
}

func TestNoVersionInTag(t *testing.T) {
	r := root(t, "19.3.1", "kubernetes", `    helper_image = "`+helperimage.GitLabRegistryName+`:latest"`+"\n")
	checktest.WantSays(t, run(t, r, true), checks.StatusFail, "names no version", "(v19.3.1)")
}

// TestUnsetIsNotedForDeckhouse: with helper_image unset a runner of the
// Deckhouse image (fleeting-plugin-dvp in /usr/local/bin) is told the
// default comes from registry.gitlab.com; any other runner is not.
func TestUnsetIsNotedForDeckhouse(t *testing.T) {
	r := root(t, "19.3.1", "kubernetes", "")
	res := run(t, r, true)
	checktest.WantSays(t, res, checks.StatusPass)
	if len(res.Findings) != 0 {
		t.Errorf("a runner of another image: want no findings:\n%s", checktest.Text(res))
	}
	r.Write("/proc/4242/root/usr/local/bin/fleeting-plugin-dvp", "#!/bin/sh\n", 0o755)
	checktest.WantSays(t, run(t, r, true), checks.StatusPass, "[info]", helperimage.GitLabRegistryName+":x86_64-v19.3.1 from registry.gitlab.com",
		"/proc/4242/root/usr/local/bin/fleeting-plugin-dvp", `helper_image = "`+helperimage.DeckhouseHelper+`:v19.3.1"`)
}

func TestUnknownRunnerVersion(t *testing.T) {
	r := root(t, "", "docker", `    helper_image = "`+helperimage.DeckhouseHelper+`:v19.2.0"`+"\n")
	checktest.WantSays(t, run(t, r, true), checks.StatusUnknown)
}

// TestAmd64ImageOnArmDaemon: the Deckhouse helper is amd64 only; a daemon
// whose /version says arm64 cannot run it.
func TestAmd64ImageOnArmDaemon(t *testing.T) {
	r := root(t, "19.3.1", "docker", `    helper_image = "`+helperimage.DeckhouseHelper+`:v19.3.1"`+"\n")
	p := filepath.Join(r.Dir, "var/run/docker.sock")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	m := http.NewServeMux()
	m.HandleFunc("/_ping", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "OK") })
	m.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"Version":"24.0.7","ApiVersion":"1.43","Os":"linux","Arch":"arm64"}`)
	})
	srv := &http.Server{Handler: m}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	checktest.WantSays(t, run(t, r, false), checks.StatusFail, "[error]", "is built for linux/amd64, but its Docker daemon runs arm64")
}
