package hostfacts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Every parser here reads bytes a host (or an attacker with write access to
// a file doctor reads) controls: none may panic, and what each returns is
// never larger than what it was given (a word redaction replaced by at
// most one stand-in, redact.MaxStandInLen).

func FuzzParseEnviron(f *testing.F) {
	f.Add([]byte("KUBECONFIG=/etc/k.yaml\x00PATH=/bin\x00"))
	f.Add([]byte("=\x00==\x00A\x00"))
	f.Add([]byte{0, 0, 0xff, '=', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		vars := ParseEnviron(b)
		n := 0
		for k, v := range vars {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
				t.Fatalf("bad entry %q=%q", k, v)
			}
			n += len(k) + 1 + len(v)
		}
		if n > len(b)+1 {
			t.Fatalf("%d bytes of variables from %d bytes of environ", n, len(b))
		}
	})
}

func FuzzReadProcess(f *testing.F) {
	f.Add([]byte("gitlab-runner\n"), []byte("/usr/bin/gitlab-runner\x00run\x00--config\x00/c.toml\x00"),
		[]byte("Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t1 2\n"))
	f.Add([]byte(""), []byte("gitlab-runner\x00--log-level\x00"), []byte("Uid:\nGroups:\t-1 99999999999999999999\n"))
	f.Add([]byte("\xff"), []byte("\x00\x00run"), []byte("Uid:\tx\ty\n:::\n"))
	f.Fuzz(func(t *testing.T, comm, cmdline, status []byte) {
		root := t.TempDir()
		for name, b := range map[string][]byte{"comm": comm, "cmdline": cmdline, "status": status} {
			p := filepath.Join(root, "proc", "7", name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		proc, ok := readProcess(&hostio.Env{Root: root}, 7, map[int]PasswdEntry{0: {Name: "root", Home: "/root"}})
		if !ok {
			return
		}
		// The command line is the kernel's words, some replaced by
		// stand-ins (redact.Argv): as many words, each at most one
		// stand-in longer than the word it was. A short secret's
		// stand-in is longer than the secret (FuzzReadProcess/f7b9c71cf9bd3ea6).
		if proc.CmdlineErr == nil && len(proc.Cmdline) > 0 {
			raw, _ := parseCmdline(cmdline)
			if len(raw) != len(proc.Cmdline) {
				t.Fatalf("%d words from a command line of %d: %q", len(proc.Cmdline), len(raw), proc.Cmdline)
			}
			for i, a := range proc.Cmdline {
				if len(a) > len(raw[i])+redact.MaxStandInLen {
					t.Fatalf("word %q read as %d bytes: %q", raw[i], len(a), a)
				}
			}
		}
		if len(proc.Groups) > len(status) || len(proc.Comm) > len(comm) {
			t.Fatalf("process larger than its /proc entry: %+v", proc)
		}
		// The uid is read as the kernel writes it, or unknown: never a
		// guess such as -1 that a fix would print (`chown -1`).
		label := proc.Label()
		if proc.UIDKnown && proc.UID < 0 || !proc.UIDKnown && !strings.Contains(label, "uid unknown") || strings.Contains(label, "uid -") {
			t.Fatalf("uid %d (known %v) labelled %q", proc.UID, proc.UIDKnown, label)
		}
	})
}

func FuzzReadPasswd(f *testing.F) {
	f.Add([]byte("root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:999:999::/home/gitlab-runner:/bin/sh\n"))
	f.Add([]byte(":::::::\n::-1:::::\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "etc", "passwd"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		got := ReadPasswd(&hostio.Env{Root: root})
		if len(got) > strings.Count(string(b), "\n")+1 {
			t.Fatalf("%d users from %d lines", len(got), strings.Count(string(b), "\n")+1)
		}
		for _, e := range got {
			if len(e.Name)+len(e.Home) > len(b) {
				t.Fatal("entry larger than the file")
			}
		}
	})
}

// FuzzStartTime reads a process's start from arbitrary /proc/stat and
// /proc/<pid>/stat: comm may hold spaces and parentheses, so fields are
// counted after its last ")". No panic; the start is unknown (zero) or at
// or after boot.
func FuzzStartTime(f *testing.F) {
	f.Add([]byte("cpu 1 2 3\nbtime 1764590400\nprocesses 99\n"),
		[]byte("4242 (gitlab-runner) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 12 0 123456 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"))
	f.Add([]byte("btime -1\n"), []byte("7 (a) b) (c) S"+strings.Repeat(" 9", 30)))
	f.Add([]byte("btime 99999999999999999999\n"), []byte("7 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 -5\n"))
	f.Add([]byte("btime 1\n"), []byte(")"))
	f.Fuzz(func(t *testing.T, stat, pidStat []byte) {
		root := t.TempDir()
		for name, b := range map[string][]byte{"stat": stat, "7/stat": pidStat} {
			p := filepath.Join(root, "proc", name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		env := &hostio.Env{Root: root}
		boot := bootTime(env)
		if !boot.IsZero() && boot.Unix() <= 0 {
			t.Fatalf("boot time %v from %q", boot, stat)
		}
		started := startTime(env, 7, boot)
		if !started.IsZero() && started.Before(boot) {
			t.Fatalf("started %v before boot %v", started, boot)
		}
	})
}
