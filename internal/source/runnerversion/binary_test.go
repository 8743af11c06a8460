package runnerversion

import (
	"debug/elf"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goTool is the go command running these tests.
func goTool(t *testing.T) string {
	t.Helper()
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build test binaries with")
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// fakeRunner is a module named like gitlab-runner whose package common has
// the runner's version variables (common/version.go) and whose main uses
// them, so that -X on them takes effect: the linker ignores -X for a
// package that is not linked.
var fakeRunner = map[string]string{
	"go.mod": "module gitlab.com/gitlab-org/gitlab-runner\n\ngo 1.22\n",
	"common/version.go": `package common

var (
	NAME     = "gitlab-runner"
	VERSION  = ""
	REVISION = ""
	BRANCH   = "HEAD"
	BUILT    = ""
)
`,
	"main.go": `package main

import (
	"fmt"

	"gitlab.com/gitlab-org/gitlab-runner/common"
)

var VERSION = "dev"

// A statically initialised version-like string in .data, not NUL-ended.
var decoy = "1.2.3"

func main() {
	fmt.Println(common.NAME, common.VERSION, common.REVISION, common.BRANCH, common.BUILT, VERSION, decoy)
}
`,
}

var otherProgram = map[string]string{
	"go.mod":  "module example.com/other\n\ngo 1.22\n",
	"main.go": "package main\n\nvar Version = \"\"\n\nfunc main() { println(Version) }\n",
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run runs a command in dir with a hermetic environment: no network
// (GOPROXY=off; the modules have no dependencies), no cgo.
func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	runEnv(t, dir, nil, name, args...)
}

func runEnv(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "CGO_ENABLED=0", "GOWORK=off", "GOTOOLCHAIN=local",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// build compiles a program with extra go build arguments into
// root/usr/bin/gitlab-runner and returns root.
func build(t *testing.T, files map[string]string, args ...string) string {
	t.Helper()
	return buildEnv(t, files, nil, args...)
}

func buildEnv(t *testing.T, files map[string]string, env []string, args ...string) string {
	t.Helper()
	src := t.TempDir()
	writeTree(t, src, files)
	root := t.TempDir()
	out := filepath.Join(root, "usr", "bin", "gitlab-runner")
	runEnv(t, src, env, goTool(t), append(append([]string{"build", "-buildvcs=false", "-o", out}, args...), ".")...)
	return root
}

const stamp = "-X main.VERSION=19.3.1 -X gitlab.com/gitlab-org/gitlab-runner/common.VERSION=19.3.1 " +
	"-X gitlab.com/gitlab-org/gitlab-runner/common.NAME=gitlab-runner " +
	"-X gitlab.com/gitlab-org/gitlab-runner/common.BRANCH=19-3-stable"

func TestFromBinary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    Version
		wantErr error
		env     []string
	}{
		{"ldflags", []string{"-ldflags", stamp + " -X gitlab.com/gitlab-org/gitlab-runner/common.REVISION=9cbf0074"},
			Version{"19.3.1", "buildinfo -ldflags of /usr/bin/gitlab-runner", "9cbf0074"}, nil, nil},
		{"ldflags quoted", []string{"-ldflags", `-X 'gitlab.com/gitlab-org/gitlab-runner/common.VERSION=19.3.1' -X=gitlab.com/gitlab-org/gitlab-runner/common.BRANCH=main`},
			Version{"19.3.1", "buildinfo -ldflags of /usr/bin/gitlab-runner", ""}, nil, nil},
		// As Makefile.build.mk builds releases: -trimpath drops -ldflags
		// from the build settings, -w keeps the symbol table.
		{"trimpath", []string{"-trimpath", "-ldflags", stamp + " -X gitlab.com/gitlab-org/gitlab-runner/common.REVISION=9cbf0074 -w"},
			Version{"19.3.1", "ELF symbol gitlab.com/gitlab-org/gitlab-runner/common.VERSION of /usr/bin/gitlab-runner", "9cbf0074"}, nil, nil},
		{"stripped", []string{"-trimpath", "-ldflags", stamp + " -s -w"},
			Version{"19.3.1", "NUL-terminated -X string in .rodata of /usr/bin/gitlab-runner (no symbol table)", ""}, nil, nil},
		{"stripped pre-release", []string{"-trimpath", "-ldflags", "-s -w -X gitlab.com/gitlab-org/gitlab-runner/common.VERSION=19.4.0~pre.12.gd79f3e7b"},
			Version{"19.4.0~pre.12.gd79f3e7b", "NUL-terminated -X string in .rodata of /usr/bin/gitlab-runner (no symbol table)", ""}, nil, nil},
		{"pie", []string{"-buildmode=pie", "-trimpath", "-ldflags", stamp + " -w"},
			Version{"19.3.1", "ELF symbol gitlab.com/gitlab-org/gitlab-runner/common.VERSION of /usr/bin/gitlab-runner", ""}, nil, nil},
		{"pie stripped", []string{"-buildmode=pie", "-trimpath", "-ldflags", stamp + " -s -w"},
			Version{"19.3.1", "NUL-terminated -X string in .rodata of /usr/bin/gitlab-runner (no symbol table)", ""}, nil, nil},
		// Binaries for other machines are read, not run: 32-bit ELF.
		{"386", []string{"-trimpath", "-ldflags", stamp + " -w"},
			Version{"19.3.1", "ELF symbol gitlab.com/gitlab-org/gitlab-runner/common.VERSION of /usr/bin/gitlab-runner", ""}, nil, []string{"GOOS=linux", "GOARCH=386"}},
		{"386 stripped", []string{"-trimpath", "-ldflags", stamp + " -s -w"},
			Version{"19.3.1", "NUL-terminated -X string in .rodata of /usr/bin/gitlab-runner (no symbol table)", ""}, nil, []string{"GOOS=linux", "GOARCH=386"}},
		// Two different version-like stamps and no symbols to tell them
		// apart: no answer rather than a guess.
		{"stripped, ambiguous", []string{"-trimpath", "-ldflags", "-s -w -X main.VERSION=19.2.0 -X gitlab.com/gitlab-org/gitlab-runner/common.VERSION=19.3.1"},
			Version{}, ErrNoVersion, nil},
		{"not stamped", []string{"-trimpath", "-ldflags", "-w"}, Version{}, ErrNoVersion, nil},
		{"not stamped, stripped", []string{"-trimpath", "-ldflags", "-s -w"}, Version{}, ErrNoVersion, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("builds a Go program")
			}
			root := buildEnv(t, fakeRunner, tc.env, tc.args...)
			got, err := FromBinary(root, "/usr/bin/gitlab-runner")
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("FromBinary = %+v, %v; want error %v", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("FromBinary = %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

// A build from a git checkout at a tag, without -X VERSION: Go (1.24+)
// stamps the main module's version from VCS, but gitlab-runner's module path
// has no /v19 suffix, so that is a v0.0.0 pseudo-version, not the tag. The
// runner would print it; FromBinary reports no version, naming it and the
// revision.
func TestFromBinaryVCS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	src := t.TempDir()
	writeTree(t, src, fakeRunner)
	run(t, src, git, "init", "-q")
	run(t, src, git, "add", ".")
	run(t, src, git, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x")
	run(t, src, git, "tag", "v19.3.2")
	cmd := exec.Command(git, "rev-parse", "HEAD")
	cmd.Dir = src
	head, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	run(t, src, goTool(t), "build", "-buildvcs=true", "-trimpath", "-ldflags", "-w", "-o", filepath.Join(root, "gitlab-runner"), ".")
	_, err = FromBinary(root, "/gitlab-runner")
	if !errors.Is(err, ErrNoVersion) || !strings.Contains(err.Error(), "pseudo-version v0.0.0-") ||
		!strings.Contains(err.Error(), "(revision "+string(head[:8])+")") {
		t.Fatalf("err = %v", err)
	}

	// With the stamp, the revision comes from vcs.revision, as in
	// common/version.go since v17.9.
	run(t, src, goTool(t), "build", "-buildvcs=true", "-trimpath", "-ldflags", stamp+" -w", "-o", filepath.Join(root, "gitlab-runner"), ".")
	got, err := FromBinary(root, "/gitlab-runner")
	want := Version{"19.3.1", "ELF symbol gitlab.com/gitlab-org/gitlab-runner/common.VERSION of /gitlab-runner", string(head[:8])}
	if err != nil || got != want {
		t.Fatalf("FromBinary = %+v, %v\nwant %+v", got, err, want)
	}
}

func TestPseudoVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.0.0-20261201090634-41dcbad7bd54":        true,
		"v0.0.0-20261201090634-41dcbad7bd54+dirty":  true,
		"v19.3.1-0.20261201090634-41dcbad7bd54":     true,
		"v19.3.0-rc1.0.20261201090634-41dcbad7bd54": true,
		"v19.3.0":     false,
		"v19.3.0-rc1": false,
	} {
		if got := pseudoVersion().MatchString(v); got != want {
			t.Errorf("pseudoVersion(%s) = %v", v, got)
		}
	}
}

func TestFromBinaryOtherGoProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	root := build(t, otherProgram, "-trimpath", "-ldflags", "-s -w -X main.Version=19.3.1")
	_, err := FromBinary(root, "/usr/bin/gitlab-runner")
	if !errors.Is(err, ErrNoVersion) || !strings.Contains(err.Error(), "example.com/other, not gitlab-runner") {
		t.Fatalf("err = %v", err)
	}
}

func TestFromBinaryRefuses(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"usr/bin/gitlab-runner": "#!/bin/sh\necho 'Version: 19.3.1'\n",
		"usr/bin/elf-not-go":    "\x7fELF\x02\x01\x01\x00garbage",
	})
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{"/usr/bin/gitlab-runner", ErrNotGo},
		{"/usr/bin/elf-not-go", ErrNotGo},
		{"/usr/bin/missing", fs.ErrNotExist},
		{"/dir", ErrNotRegular},
	} {
		_, err := FromBinary(root, tc.path)
		if !errors.Is(err, tc.want) {
			t.Errorf("FromBinary(%s) = %v, want %v", tc.path, err, tc.want)
		}
		var fe *FileError
		if !errors.As(err, &fe) || fe.Path != tc.path || strings.Contains(err.Error(), root) {
			t.Errorf("FromBinary(%s) error %q should name the host path only", tc.path, err)
		}
	}
}

func TestXFlags(t *testing.T) {
	got := xFlags(`-s -w -X a.B=1 --X=a.C=two -X "a.D=with space" -X 'a.E=x=y' -X a.B=last -extldflags "-static"`)
	want := map[string]string{"a.B": "last", "a.C": "two", "a.D": "with space", "a.E": "x=y"}
	if len(got) != len(want) {
		t.Errorf("xFlags = %q", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("xFlags[%s] = %q, want %q", k, got[k], v)
		}
	}
}

// The scan charges every chunk it reads to its budget and stops when the
// next one would overrun it.
func TestScanBudget(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Skip("test binary is not ELF:", err)
	}
	defer ef.Close()
	ro := ef.Section(".rodata")
	if ro == nil {
		t.Skip("no .rodata")
	}
	read := int64(0)
	budget := int64(100)
	err = scanSection(ro, &budget, 1, 1, func(base int64, b []byte, lo, hi int) { read += int64(hi - lo) })
	if err == nil || !strings.Contains(err.Error(), "256 MiB read limit") || read != 0 {
		t.Errorf("budget 100: err %v, read %d", err, read)
	}
	budget = 2 * int64(ro.Size)
	err = scanSection(ro, &budget, 1, 1, func(base int64, b []byte, lo, hi int) {
		if lo > 1 || hi > len(b) || int64(len(b)) > scanChunk+2 {
			t.Errorf("chunk at %d: lo %d hi %d len %d", base, lo, hi, len(b))
		}
		read += int64(hi - lo)
	})
	if err != nil || read != int64(ro.Size) || budget < int64(ro.Size)-4096 {
		t.Errorf("whole section: err %v, read %d of %d, budget left %d", err, read, ro.Size, budget)
	}
}
