package runnerkubeconfigenv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
	"github.com/socialwebcomputer/doctor/testkit/realsystemd"
)

// planRows is how many generated units TestDropInWinsOnRealSystemd
// gives doctor's drop-in.
const planRows = 120

// The drop-in doctor writes gives the runner its KUBECONFIG on a real
// systemd (Debian 12's 252, as PID 1 of its own namespaces), whatever the
// unit's other drop-ins do: on generated units whose drop-ins, across
// /etc, /run and /lib, reset Environment=, set another KUBECONFIG, unset it
// or reset UnsetEnvironment=, the drop-in planDropIn names and fills is
// written to /etc/systemd/system/UNIT.d/, the unit is started, and its
// process has exactly the KUBECONFIG the fix gives. The same rows with the
// drop-in always named kubeconfig.conf (what doctor wrote before) are
// counted where they lose.
func TestDropInWinsOnRealSystemd(t *testing.T) {
	m := realsystemd.Start(t)
	const want = "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"
	r := rand.New(rand.NewPCG(30, 1))
	lostBefore, renamed, unsetReset := 0, 0, 0
	for i := 0; i < planRows; i++ {
		files := planLayout(r)
		u := loadUnder(t, m.MergedUsr, files)
		pl := planDropIn(u, want)
		if pl.stuck != nil {
			t.Fatalf("row %d: no name wins over %s, but the generator writes none such", i, pl.stuck)
		}
		if pl.name != defaultDropIn {
			renamed++
		}
		if pl.resetUnset {
			unsetReset++
		}
		got := startWith(t, m, files, pl, want)
		if got != want {
			t.Errorf("row %d: with doctor's %s the runner gets KUBECONFIG=%q, want %q\n%s", i, pl.name, got, want, describe(files))
		}
		old := plan{name: defaultDropIn}
		if startWith(t, m, files, old, want) != want {
			lostBefore++
		}
	}
	t.Logf("%d rows: doctor named the drop-in otherwise in %d and reset UnsetEnvironment= in %d; kubeconfig.conf alone would lose in %d",
		planRows, renamed, unsetReset, lostBefore)
	if lostBefore == 0 || renamed == 0 || unsetReset == 0 {
		t.Errorf("the rows do not exercise the plan: %d lost with kubeconfig.conf, %d renamed, %d unset resets", lostBefore, renamed, unsetReset)
	}
}

// planLayout draws gitlab-runner.service with zero to five drop-ins.
func planLayout(r *rand.Rand) map[string]realsystemd.File {
	files := map[string]realsystemd.File{
		"/lib/systemd/system/gitlab-runner.service": {Content: "[Service]\nExecStart=/usr/bin/gitlab-runner run\n"},
	}
	dirs := []string{"/etc/systemd/system/gitlab-runner.service.d", "/run/systemd/system/gitlab-runner.service.d",
		"/lib/systemd/system/gitlab-runner.service.d", "/etc/systemd/system/service.d", "/etc/systemd/system/gitlab-.service.d"}
	names := []string{"kubeconfig.conf", "override.conf", "10-proxy.conf", "zz-reset.conf", "zz-kubeconfig.conf", "zzz.conf", "50-env.conf"}
	lines := []string{"Environment=", "Environment=KUBECONFIG=/etc/gitlab-runner/old.yaml", "UnsetEnvironment=KUBECONFIG",
		"UnsetEnvironment=", "UnsetEnvironment=HTTPS_PROXY KUBECONFIG=" + "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml", "Environment=HTTPS_PROXY=http://proxy:3128",
		"UnsetEnvironment=NO_PROXY"}
	for n := r.IntN(6); n > 0; n-- {
		var b strings.Builder
		b.WriteString("[Service]\n")
		for k := 1 + r.IntN(3); k > 0; k-- {
			b.WriteString(lines[r.IntN(len(lines))] + "\n")
		}
		files[dirs[r.IntN(len(dirs))]+"/"+names[r.IntN(len(names))]] = realsystemd.File{Content: b.String()}
	}
	return files
}

// loadUnder is the model's unit from a root holding files.
func loadUnder(t *testing.T, mergedUsr bool, files map[string]realsystemd.File) *systemd.Unit {
	t.Helper()
	root := t.TempDir()
	if mergedUsr {
		if err := os.MkdirAll(filepath.Join(root, "usr/lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
			t.Fatal(err)
		}
	}
	for p, f := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(f.Content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u, err := systemd.Load(&hostio.Env{Root: root}, "gitlab-runner.service")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// startWith lays files out with the plan's drop-in in /etc and returns the
// KUBECONFIG systemd gives the started process ("" when none).
func startWith(t *testing.T, m *realsystemd.Manager, files map[string]realsystemd.File, pl plan, kubeconfig string) string {
	t.Helper()
	text, err := kubeconfigSection(kubeconfig, pl).Text()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]realsystemd.File{"/etc/systemd/system/gitlab-runner.service.d/" + pl.name: {Content: text + "\n"}}
	for p, f := range files {
		if _, ours := all[p]; !ours {
			all[p] = f
		}
	}
	if err := m.Layout(all); err != nil {
		t.Fatal(err)
	}
	env, err := m.Environ("gitlab-runner.service")
	if err != nil {
		t.Fatal(err)
	}
	return env["KUBECONFIG"]
}

func describe(files map[string]realsystemd.File) string {
	var b strings.Builder
	for p, f := range files {
		fmt.Fprintf(&b, "  %s:\n    %s\n", p, strings.ReplaceAll(strings.TrimSpace(f.Content), "\n", "\n    "))
	}
	return b.String()
}
