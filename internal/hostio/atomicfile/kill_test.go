//go:build unix

package atomicfile

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv names the file a helper process writes: it is this test binary,
// started again, that creates its temporary file, says so on stdout and
// blocks there until it is killed.
const helperEnv = "ATOMICFILE_TEST_WRITE_AND_BLOCK"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		testHookTempCreated = func(name string) {
			fmt.Println(name)
			select {}
		}
		err := WriteMode(path, []byte("never written\n"), 0o600)
		fmt.Fprintln(os.Stderr, "the write returned:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// killedMidWrite starts a helper writing path, waits for its temporary
// file, kills it with SIGKILL and returns that file's path.
func killedMidWrite(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var tmp string
	select {
	case tmp = <-line:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the helper never created its temporary file")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the helper ended %v, not by SIGKILL", cmd.ProcessState)
	}
	if _, err := os.Lstat(tmp); err != nil {
		t.Fatalf("the killed write left no temporary file: %v", err)
	}
	if !strings.Contains(filepath.Base(tmp), fmt.Sprintf(".doctor-tmp-%d-", cmd.Process.Pid)) {
		t.Errorf("temporary file %s does not name its writer's pid %d", tmp, cmd.Process.Pid)
	}
	return tmp
}

// A write killed with SIGKILL between creating its temporary file and the
// rename leaves that file; the next write of the same file removes it. A
// temporary file whose writer is alive and young stays, one of another
// user's stays, one of another file stays, and one older than StaleTemp
// goes whatever its pid (the pid was reused).
func TestWriteSweepsWhatAKilledWriteLeft(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	left := killedMidWrite(t, p)
	if _, err := os.Stat(p); err == nil {
		t.Fatal("the killed write replaced the file")
	}

	// Temporaries the sweep must leave: a live writer's (this test's
	// parent: alive, not this process), another user's, another file's.
	live := filepath.Join(dir, tempName("state.json", os.Getppid(), "live"))
	others := filepath.Join(dir, tempName("state.json", 999999999, "others"))
	otherFile := filepath.Join(dir, tempName("cache.json", 999999999, "otherfile"))
	// And one the sweep must take: a live pid, but older than StaleTemp.
	old := filepath.Join(dir, tempName("state.json", os.Getppid(), "old"))
	for _, f := range []string{live, others, otherFile, old} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(others, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	stale := time.Now().Add(-StaleTemp - time.Minute)
	if err := os.Chtimes(old, stale, stale); err != nil {
		t.Fatal(err)
	}

	if err := Write(p, []byte("written\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "written\n" {
		t.Errorf("after the sweep the write wrote %q, %v", b, err)
	}
	for f, want := range map[string]bool{left: false, old: false, live: true, others: true, otherFile: true} {
		if _, err := os.Lstat(f); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
}

func TestTempNameRoundTrip(t *testing.T) {
	name := tempName("doctor.prom", 4242, "0a1b2c3d")
	if pid, ok := tempPID("doctor.prom", name); !ok || pid != 4242 {
		t.Errorf("tempPID(%q) = %d, %v", name, pid, ok)
	}
	for _, other := range []string{".doctor.prom.tmp-123", "doctor.prom", tempName("doctor.pro", 1, "x"), ".doctor.prom.doctor-tmp-x-y", ".doctor.prom.doctor-tmp-12-"} {
		if _, ok := tempPID("doctor.prom", other); ok {
			t.Errorf("%q taken for a temporary file of doctor.prom", other)
		}
	}
	if long := tempName(strings.Repeat("a", 250), 4194304, "0a1b2c3d"); len(long) > 255 {
		t.Errorf("a temporary file's name of %d bytes is past NAME_MAX", len(long))
	}
}
