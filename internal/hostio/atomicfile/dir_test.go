//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const nobody = 65534

func mkdir(t *testing.T, p string, mode os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// Write refuses a directory it may not trust, names it, its owner and mode
// and the fix, and writes nothing there or where a symlink points; it
// writes where the invoker (root, in these tests) alone may write, a
// sticky directory included, and follows a symlink on the way that root
// made.
func TestWriteRefusesAnUntrustedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to give directories to another user")
	}
	base := t.TempDir()
	elsewhere := mkdir(t, filepath.Join(base, "elsewhere"), 0o755)
	for _, c := range []struct {
		name string
		// lay returns the file to write and, for a refusal, where it must
		// not appear.
		lay  func(t *testing.T, d string) (file string, notAt []string)
		want string // "" written
	}{
		{"0755, root's", func(t *testing.T, d string) (string, []string) {
			return filepath.Join(mkdir(t, d, 0o755), "f"), nil
		}, ""},
		{"sticky 1777, root's", func(t *testing.T, d string) (string, []string) {
			return filepath.Join(mkdir(t, d, 0o777|os.ModeSticky), "f"), nil
		}, ""},
		{"a symlink root made on the way", func(t *testing.T, d string) (string, []string) {
			real := mkdir(t, d+".real", 0o755)
			mkdir(t, filepath.Join(real, "sub"), 0o755)
			if err := os.Symlink(real, d); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(d, "sub", "f"), nil
		}, ""},
		{"the directory is a symlink", func(t *testing.T, d string) (string, []string) {
			if err := os.Symlink(elsewhere, d); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(d, "f"), []string{filepath.Join(elsewhere, "f")}
		}, "is a symlink (to " + elsewhere + "); doctor does not write through one"},
		{"a symlink another user made on the way", func(t *testing.T, d string) (string, []string) {
			mkdir(t, filepath.Join(elsewhere, "sub"), 0o755)
			if err := os.Symlink(elsewhere, d); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(d, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(d, "sub", "f"), []string{filepath.Join(elsewhere, "sub", "f")}
		}, "is a symlink (to " + elsewhere + ") of uid 65534"},
		{"another user's", func(t *testing.T, d string) (string, []string) {
			mkdir(t, d, 0o755)
			if err := os.Chown(d, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(d, "f"), []string{filepath.Join(d, "f")}
		}, "is owned by uid 65534 with mode 0755: another user's"},
		{"0777", func(t *testing.T, d string) (string, []string) {
			return filepath.Join(mkdir(t, d, 0o777), "f"), []string{filepath.Join(d, "f")}
		}, "is owned by uid 0 with mode 0777: writable by its group and every user"},
		{"0775", func(t *testing.T, d string) (string, []string) {
			return filepath.Join(mkdir(t, d, 0o775), "f"), []string{filepath.Join(d, "f")}
		}, "with mode 0775: writable by its group"},
		{"sticky, the file another user's", func(t *testing.T, d string) (string, []string) {
			f := filepath.Join(mkdir(t, d, 0o777|os.ModeSticky), "f")
			if err := os.WriteFile(f, []byte("theirs"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(f, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return f, nil
		}, "f in sticky directory " + filepath.Join(base, "sticky, the file another user's") + " is uid 65534's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file, notAt := c.lay(t, filepath.Join(base, c.name))
			checkErr := CheckDir(file)
			err := Write(file, []byte("written\n"))
			if c.want == "" {
				if err != nil || checkErr != nil {
					t.Fatalf("Write %v, CheckDir %v; want both to accept", err, checkErr)
				}
				if b, err := os.ReadFile(file); err != nil || string(b) != "written\n" {
					t.Errorf("read back %q, %v", b, err)
				}
				return
			}
			for what, err := range map[string]error{"Write": err, "CheckDir": checkErr} {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v; want %q", what, err, c.want)
				}
			}
			for _, p := range notAt {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
}

// The cache directory is read back too: sticky is not enough, and neither
// a symlink nor another user's directory is one.
func TestPrivateDir(t *testing.T) {
	base := t.TempDir()
	for name, c := range map[string]struct {
		mode os.FileMode
		want string
	}{
		"0700":   {0o700, ""},
		"0755":   {0o755, ""},
		"sticky": {0o777 | os.ModeSticky, "with mode 1777: writable by its group and every user"},
		"0770":   {0o770, "with mode 0770: writable by its group"},
	} {
		err := PrivateDir(mkdir(t, filepath.Join(base, name), c.mode))
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(filepath.Join(base, "0700"), link); err != nil {
		t.Fatal(err)
	}
	if err := PrivateDir(link); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("a symlink: %v", err)
	}
}

// The directory is opened once and everything after is relative to it: a
// swap of the path for a symlink after the check (here, once the temporary
// file exists) does not move the write.
func TestWriteStaysInTheDirectoryItOpened(t *testing.T) {
	base := t.TempDir()
	d := mkdir(t, filepath.Join(base, "d"), 0o755)
	target := mkdir(t, filepath.Join(base, "target"), 0o755)
	moved := filepath.Join(base, "moved")
	testHookTempCreated = func(string) {
		if err := os.Rename(d, moved); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(target, d); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookTempCreated = nil }()
	if err := Write(filepath.Join(d, "f"), []byte("written\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(target, "f")); err == nil {
		t.Error("the write followed the symlink swapped in")
	}
	if b, err := os.ReadFile(filepath.Join(moved, "f")); err != nil || string(b) != "written\n" {
		t.Errorf("the directory opened holds %q, %v", b, err)
	}
}

// A file left for another program (the textfile node_exporter reads, a
// bundle) may go into another user's directory that only that user may
// write, as a packaged collector's own directory is: the write is made
// relative to the opened directory, so its owner cannot redirect it. A
// directory others may write, or a symlink, is still refused.
func TestPublishInAnotherUsersDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to give directories to another user")
	}
	base := t.TempDir()
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755)
	shared := mkdir(t, filepath.Join(base, "shared"), 0o775)
	for _, d := range []string{theirs, shared} {
		if err := os.Chown(d, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(theirs, "doctor.prom")
	if err := CheckPublishDir(f); err != nil {
		t.Fatalf("CheckPublishDir: %v", err)
	}
	if err := Publish(f, []byte("published\n"), 0o644); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if b, err := os.ReadFile(f); err != nil || string(b) != "published\n" {
		t.Errorf("read back %q, %v", b, err)
	}
	// What doctor reads back is still refused there.
	if err := WriteMode(filepath.Join(theirs, "state.json"), []byte("x"), 0o600); err == nil || !strings.Contains(err.Error(), "another user's") {
		t.Errorf("WriteMode in another user's directory: %v; want a refusal", err)
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join(shared, "doctor.prom"), "with mode 0775: writable by its group"},
		{filepath.Join(link, "doctor.prom"), "is a symlink (to " + theirs + ")"},
	} {
		for what, err := range map[string]error{"Publish": Publish(c.file, []byte("x"), 0o644), "CheckPublishDir": CheckPublishDir(c.file)} {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %s: %v; want %q", what, c.file, err, c.want)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(shared, "doctor.prom")); err == nil {
		t.Error("published into a directory its group may write")
	}
}
