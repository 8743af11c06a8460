package systemd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// ConditionFileIsExecutable= is parsed as config_parse_unit_condition_path
// and tested as condition_test_list and condition_test_file_is_executable
// do (src/shared/condition.c, v252): a regular file with any execute bit,
// symlinks followed; "!" inverts; an empty value resets; of the "|"
// conditions one must hold.
func TestConditionFileIsExecutable(t *testing.T) {
	f := newFixture(t)
	f.file("usr/bin/exec", "#!/bin/sh\n")
	f.file("usr/bin/plain", "data\n")
	if err := os.Chmod(filepath.Join(f.dir, "usr/bin/exec"), 0o700); err != nil { // the owner's bit is enough
		t.Fatal(err)
	}
	f.link("usr/bin/link", "/usr/bin/exec")
	f.mkdir("usr/bin/dir")
	if err := os.Chmod(filepath.Join(f.dir, "usr/bin/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, conditions string
		unmet            string // the condition reported, "" when they hold
	}{
		{"none", "", ""},
		{"executable", "ConditionFileIsExecutable=/usr/bin/exec", ""},
		{"symlink followed", "ConditionFileIsExecutable=/usr/bin/link", ""},
		{"missing", "ConditionFileIsExecutable=/usr/bin/gone", "ConditionFileIsExecutable=/usr/bin/gone"},
		{"no execute bit", "ConditionFileIsExecutable=/usr/bin/plain", "ConditionFileIsExecutable=/usr/bin/plain"},
		{"directory", "ConditionFileIsExecutable=/usr/bin/dir", "ConditionFileIsExecutable=/usr/bin/dir"},
		{"negated", "ConditionFileIsExecutable=!/usr/bin/exec", "ConditionFileIsExecutable=!/usr/bin/exec"},
		{"negated missing holds", "ConditionFileIsExecutable=! /usr/bin/gone", ""},
		{"path simplified", "ConditionFileIsExecutable=/usr//bin/./gone", "ConditionFileIsExecutable=/usr/bin/gone"},
		{"reset", "ConditionFileIsExecutable=/usr/bin/gone\nConditionFileIsExecutable=", ""},
		{"relative ignored", "ConditionFileIsExecutable=usr/bin/gone", ""},
		{"one trigger holds", "ConditionFileIsExecutable=|/usr/bin/gone\nConditionFileIsExecutable=|/usr/bin/exec", ""},
		{"no trigger holds", "ConditionFileIsExecutable=|/usr/bin/gone\nConditionFileIsExecutable=| /usr/bin/plain", "ConditionFileIsExecutable=/usr/bin/gone"},
		{"non-trigger decides", "ConditionFileIsExecutable=|/usr/bin/exec\nConditionFileIsExecutable=/usr/bin/plain", "ConditionFileIsExecutable=/usr/bin/plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := parseUnitBytes("x.service", "/etc/systemd/system/x.service",
				[]byte("[Unit]\nDescription=X\n"+tc.conditions+"\n[Service]\nExecStart=/usr/bin/exec\n"))
			c, _, _ := u.UnmetCondition(f.env())
			got := ""
			if c != nil {
				got = c.String()
			}
			if got != tc.unmet {
				t.Errorf("unmet condition %q, want %q (conditions %+v)", got, tc.unmet, u.Conditions)
			}
		})
	}
}

// ExecutableError is check_x_access as root: ENOENT, EISDIR, EBADFD for a
// FIFO, EACCES only for a regular file with no execute bit at all.
func TestExecutableError(t *testing.T) {
	f := newFixture(t)
	f.file("bin/exec", "x")
	f.file("bin/plain", "x")
	if err := os.Chmod(filepath.Join(f.dir, "bin/exec"), 0o100); err != nil {
		t.Fatal(err)
	}
	f.mkdir("bin/dir")
	if err := syscall.Mkfifo(filepath.Join(f.dir, "bin/fifo"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/bin/exec": "", "/bin/gone": "No such file or directory", "/bin/plain": "Permission denied",
		"/bin/dir": "Is a directory", "/bin/fifo": "File descriptor in bad state",
	} {
		_, err := ExecutableError(f.env(), path)
		got := ""
		if err != nil {
			got = Strerror(err)
		}
		if got != want {
			t.Errorf("%s: %q (%v), want %q", path, got, err, want)
		}
		if path == "/bin/plain" && (!errors.Is(err, ErrNoExecuteBit) || errors.Is(err, fs.ErrPermission)) {
			t.Errorf("%s: %v is not ErrNoExecuteBit alone: a check could not tell it from a stat refused to doctor", path, err)
		}
	}
}
