package helperimage_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// runnerBinary is a program stamped as gitlab-runner 19.3.1 is: -X
// gitlab.com/gitlab-org/gitlab-runner/common.VERSION in -ldflags, which
// internal/source/runnerversion reads from its build information.
var runnerBinary string

// TestMain keeps every dial of these tests on loopback (and unix sockets)
// under a plain go test too, and builds the stamped runner binary once.
func TestMain(m *testing.M) {
	os.Setenv(hostio.LoopbackOnlyVar, "1")
	dir, err := os.MkdirTemp("", "helperimage-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		src := filepath.Join(dir, "src")
		os.MkdirAll(src, 0o755)
		os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/runner\n\ngo 1.22\n"), 0o644)
		os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
		runnerBinary = filepath.Join(dir, "gitlab-runner")
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", runnerBinary,
			"-ldflags", "-X gitlab.com/gitlab-org/gitlab-runner/common.VERSION=19.3.1", ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "CGO_ENABLED=0", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}
