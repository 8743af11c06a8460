//go:build unix

package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// loadBounded runs Load with a deadline: a Load that blocks (a FIFO opened
// without O_NONBLOCK waits for a writer) fails the test instead of hanging.
func loadBounded(t *testing.T, path string) (*State, error) {
	t.Helper()
	type out struct {
		st  *State
		err error
	}
	done := make(chan out, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("Load(%s) panicked: %v", path, v)
				done <- out{}
			}
		}()
		st, err := Load(path)
		done <- out{st, err}
	}()
	select {
	case o := <-done:
		return o.st, o.err
	case <-time.After(5 * time.Second):
		t.Fatalf("Load(%s) blocked", path)
		return nil, nil
	}
}

func TestLoadMissingIsEmpty(t *testing.T) {
	for _, p := range []string{
		filepath.Join(t.TempDir(), "state.json"),
		filepath.Join(t.TempDir(), "no-such-dir", "state.json"),
	} {
		st, err := loadBounded(t, p)
		if err != nil {
			t.Fatalf("Load(%s): %v, want the empty state", p, err)
		}
		if st.Version != Version || st.Findings == nil || len(st.Findings) != 0 {
			t.Errorf("Load(%s) = %+v, want the empty state", p, st)
		}
	}
}

func TestLoadBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	linkToFIFO := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, linkToFIFO); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a-directory")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	// 20 MiB of valid-looking JSON would still be refused; a sparse file
	// costs no disk. The size check must trip before any read.
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"version":1,"findings":{`); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(20 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	notDir := write("plain-file", "x")

	cases := []struct {
		name, path, says string
	}{
		{"FIFO", fifo, "not a regular file (a FIFO)"},
		{"symlink to a FIFO", linkToFIFO, "not a regular file (a FIFO)"},
		{"directory", sub, "is a directory"},
		{"character device", "/dev/null", "not a regular file (a character device)"},
		{"20 MiB", huge, "larger than 10 MiB"},
		{"empty", write("empty", ""), "empty"},
		{"whitespace", write("blank", "\n \n"), "empty"},
		{"garbage", write("garbage", "\x00\x01not json at all"), "not a doctor state file"},
		{"truncated JSON", write("truncated", `{"version":1,"findings":{"aaaaaaaaaaaa":{"check":"x"`), "not a doctor state file"},
		{"trailing garbage", write("trailing", `{"version":1,"findings":{}} extra`), "not a doctor state file"},
		{"JSON of another shape", write("array", `[1,2,3]`), "not a doctor state file"},
		{"wrong type", write("wrongtype", `{"version":"1"}`), "not a doctor state file"},
		{"no version", write("noversion", `{"findings":{}}`), "format version 0"},
		{"a future version", write("future", `{"version":2,"findings":{}}`), "format version 2; this doctor reads version 1"},
		{"a key that is no fingerprint", write("badkey", `{"version":1,"findings":{"../../etc":{"check":"x"}}}`), "is not a fingerprint"},
		{"an entry with no check", write("nocheck", `{"version":1,"findings":{"aaaaaaaaaaaa":{}}}`), "names no check"},
		{"a bad severity", write("badsev", `{"version":1,"findings":{"aaaaaaaaaaaa":{"check":"x","severity":"dire"}}}`), "not a doctor state file"},
		{"a path through a file", filepath.Join(notDir, "state.json"), "not a directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := loadBounded(t, c.path)
			if err == nil {
				t.Fatalf("Load(%s) = %+v, want an error", c.path, st)
			}
			if st != nil {
				t.Errorf("Load returned a state with its error")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.path) {
				t.Errorf("the error does not name the file %s: %s", c.path, msg)
			}
			if !strings.Contains(msg, c.says) {
				t.Errorf("the error %q does not say %q", msg, c.says)
			}
			if strings.Count(msg, c.path) > 1 {
				t.Errorf("the error names the file twice: %s", msg)
			}
		})
	}
}

func sample() *State {
	st := New()
	st.Findings[fpA] = entry("cert-expiry", ref(1, "k8s"), checks.Critical, "expired", t0, now)
	st.Findings[fpB] = entry("config-lint", nil, checks.Warning, "output_limit", t0, t0)
	return st
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	want := sample()
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("round trip:\n got %s\nwant %s", gb, wb)
	}
	b, _ := os.ReadFile(path)
	for _, s := range []string{`"version":1`, `"severity":"critical"`, `"firstSeen":"2026-11-01T12:00:00Z"`, `"runner":null`} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("the file lacks %s:\n%s", s, b)
		}
	}
	// A zero State saves as this version, and loads.
	if err := Save(path, &State{}); err != nil {
		t.Fatal(err)
	}
	if st, err := Load(path); err != nil || len(st.Findings) != 0 {
		t.Errorf("a zero State: %+v %v", st, err)
	}
}

// TestSaveAtomic: Save replaces the file by a rename (a reader holding the
// old file keeps the old, whole content), with mode 0600 whatever the old
// file's was, leaves no temporary file, and a concurrent Load never sees a
// partial file.
func TestSaveAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	old := `{"version":1,"findings":{}}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := Save(path, sample()); err != nil {
		t.Fatal(err)
	}
	fiOld, _ := held.Stat()
	fiNew, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(fiOld, fiNew) {
		t.Errorf("the file was rewritten in place, not replaced by a rename")
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(held); err != nil || b.String() != old {
		t.Errorf("the old file reads %q (%v), want its whole old content", b.String(), err)
	}
	if m := fiNew.Mode().Perm(); m != 0o600 {
		t.Errorf("mode %v, want 0600", m)
	}
	if got := names(t, dir); len(got) != 1 || got[0] != "state.json" {
		t.Errorf("the directory holds %v, want only state.json", got)
	}

	var stop atomic.Bool
	var bad atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			st, err := Load(path)
			if err != nil || len(st.Findings) < 1 {
				bad.Add(1)
				first.CompareAndSwap(nil, err)
			}
		}
	})
	st := sample()
	for i := range 200 {
		e := st.Findings[fpA]
		e.Title = strings.Repeat("x", i*50) // the file's size varies
		st.Findings[fpA] = e
		if err := Save(path, st); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d concurrent loads saw a partial file; first: %v", bad.Load(), first.Load())
	}
	if got := names(t, dir); len(got) != 1 {
		t.Errorf("after 200 saves the directory holds %v", got)
	}
}

// TestSaveErrors: a save that cannot happen names the file, leaves what was
// there, and no temporary file.
func TestSaveErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir", "state.json")
	if err := Save(missing, sample()); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing directory: %v", err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		make func(p string) error
	}{
		{"a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := c.make(p); err != nil {
			t.Fatal(err)
		}
		err := Save(p, sample())
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Save over %s: %v, want an error naming it", c.name, err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode().IsRegular() {
			t.Errorf("%s was replaced: %v %v", c.name, fi, err)
		}
	}
	if got := names(t, dir); len(got) != 2 {
		t.Errorf("after failed saves the directory holds %v", got)
	}
	if err := Save(filepath.Join(dir, "x.json"), nil); err == nil {
		t.Errorf("Save(nil) succeeded")
	}
}

// TestSaveAtTheBound: what Save writes, Load reads back. A state whose
// file is exactly MaxSize bytes is saved and loads; one byte more is not
// saved, says so, and leaves the last file, which still loads. A file
// written indented just under the bound (as Save once wrote it) is saved
// again within it.
func TestSaveAtTheBound(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	st := New()
	const n = 10000
	for i := range n {
		st.Findings[fmt.Sprintf("%012x", i)] = entry("config-lint", ref(1, "k8s"), checks.Warning, strings.Repeat("x", 800), t0, now)
	}
	last := fmt.Sprintf("%012x", n-1)
	// Tune the last title so the file (JSON and its newline) is MaxSize.
	size := func() int64 {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		return int64(len(b)) + 1
	}
	setTitle := func(n int) {
		e := st.Findings[last]
		e.Title = strings.Repeat("x", n)
		st.Findings[last] = e
	}
	setTitle(800 + int(MaxSize-size()))
	if got := size(); got != MaxSize {
		t.Fatalf("the state encodes to %d bytes, want %d", got, MaxSize)
	}
	if err := Save(path, st); err != nil {
		t.Fatalf("a state of exactly MaxSize: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != MaxSize {
		t.Fatalf("the file: %v, %v; want %d bytes", fi, err, MaxSize)
	}
	if got, err := Load(path); err != nil || len(got.Findings) != n {
		t.Fatalf("loading the file of MaxSize: %d findings, %v", len(got.Findings), err)
	}
	saved, _ := os.ReadFile(path)

	setTitle(len(st.Findings[last].Title) + 1)
	err := Save(path, st)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprintf("is %d bytes, past the %d a run reads back: not saved", MaxSize+1, MaxSize)) {
		t.Errorf("a state one byte past: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, saved) {
		t.Error("the last state was changed")
	}
	if _, err := Load(path); err != nil {
		t.Errorf("after the refused save the last state does not load: %v", err)
	}

	// Indented, just under the bound: it loads, and saves within it.
	setTitle(800)
	for over := len(mustIndent(t, st)) + 1 - MaxSize; over > 0; over = len(mustIndent(t, st)) + 1 - MaxSize {
		per := len(mustIndent(t, st)) / len(st.Findings)
		for range over/per + 1 {
			delete(st.Findings, fmt.Sprintf("%012x", len(st.Findings)-1))
		}
	}
	noErrT(t, os.WriteFile(path, append(mustIndent(t, st), '\n'), 0o600))
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(path, got); err != nil {
		t.Fatalf("re-saving an indented state under the bound: %v", err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("the re-saved state does not load: %v", err)
	}
}

func mustIndent(t *testing.T, st *State) []byte {
	t.Helper()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func noErrT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
