//go:build unix

package kubelet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

func pods(n int) []cachedPod {
	var out []cachedPod
	for i := range n {
		out = append(out, cachedPod{Node: fmt.Sprintf("n%d", i), Namespace: "kube-system", Name: fmt.Sprintf("node-dns-%d", i), Container: "node-dns"})
	}
	return out
}

// rememberedBounded runs rememberedFor with a deadline: a cache that is a
// FIFO must not block the run.
func rememberedBounded(t *testing.T, env *hostio.Env, key string) *RememberedReads {
	t.Helper()
	done := make(chan *RememberedReads, 1)
	go func() { done <- rememberedFor(env, key) }()
	select {
	case r := <-done:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("reading the cache blocked")
		return nil
	}
}

// TestCacheRoundTrip: what a run saves, the next reads; at most MaxNodes
// pods, stale entries and other targets' are not used, and the file keeps
// the targets saved last.
func TestCacheRoundTrip(t *testing.T) {
	env := &hostio.Env{CacheDir: filepath.Join(t.TempDir(), "doctor")}
	if err := saveCache(env, "a", pods(MaxNodes+2)); err != nil {
		t.Fatal(err)
	}
	r := rememberedBounded(t, env, "a")
	if len(r.Pods) != MaxNodes || r.Pods[0] != pods(1)[0] {
		t.Errorf("remembered %+v, want the first %d pods saved", r.Pods, MaxNodes)
	}
	if time.Since(r.Saved) > time.Minute {
		t.Errorf("saved at %s", r.Saved)
	}
	if got := rememberedBounded(t, env, "b").Pods; len(got) != 0 {
		t.Errorf("another target's pods: %+v", got)
	}
	fi, err := os.Stat(filepath.Join(env.CacheDir, cacheName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, %v; want 0600", fi, err)
	}
	if di, err := os.Stat(env.CacheDir); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("cache directory mode %v, %v; want 0700", di, err)
	}

	// Saving no pod forgets the target.
	if err := saveCache(env, "a", nil); err != nil {
		t.Fatal(err)
	}
	if got := rememberedBounded(t, env, "a").Pods; len(got) != 0 {
		t.Errorf("after saving none: %+v", got)
	}

	// A day-old entry is stale.
	c := loadCache(env)
	c.Targets["old"] = cachedTarget{Saved: time.Now().Add(-cacheFresh - time.Minute), Pods: pods(1)}
	writeCache(t, env, c)
	if got := rememberedBounded(t, env, "old").Pods; len(got) != 0 {
		t.Errorf("a stale entry was used: %+v", got)
	}

	// The file keeps the cacheTargets targets saved last.
	for i := range cacheTargets + 3 {
		if err := saveCache(env, fmt.Sprintf("t%02d", i), pods(1)); err != nil {
			t.Fatal(err)
		}
	}
	c = loadCache(env)
	if len(c.Targets) != cacheTargets {
		t.Errorf("%d targets kept, want %d", len(c.Targets), cacheTargets)
	}
	if _, ok := c.Targets[fmt.Sprintf("t%02d", cacheTargets+2)]; !ok {
		t.Errorf("the target saved last was dropped")
	}
}

func writeCache(t *testing.T, env *hostio.Env, c cacheFile) {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.CacheDir, cacheName), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCacheBadFileIsEmpty: the cache is doctor's own file, and anything
// wrong with it is an empty cache, logged at -v 2: never a panic, a block,
// an unbounded read, or a request for a name that is not a pod's.
func TestCacheBadFileIsEmpty(t *testing.T) {
	good := cacheFile{Version: cacheVersion, Targets: map[string]cachedTarget{"k": {Saved: time.Now(), Pods: pods(1)}}}
	goodJSON, _ := json.Marshal(good)
	bad := func(p cachedPod) []byte {
		b, _ := json.Marshal(cacheFile{Version: cacheVersion, Targets: map[string]cachedTarget{"k": {Saved: time.Now(), Pods: []cachedPod{p}}}})
		return b
	}
	for _, c := range []struct {
		name string
		make func(path string) error
		log  string // what -v 2 says; "" for nothing
	}{
		{"missing", func(string) error { return nil }, ""},
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o600) }, "unexpected end of JSON input"},
		{"garbage", func(p string) error { return os.WriteFile(p, []byte("\x00\xffnot json"), 0o600) }, "invalid character"},
		{"another version", func(p string) error {
			return os.WriteFile(p, []byte(strings.Replace(string(goodJSON), `"version":1`, `"version":9`, 1)), 0o600)
		}, "another format version"},
		{"over 256 KiB", func(p string) error { return os.WriteFile(p, make([]byte, cacheMaxSize+1), 0o600) }, "larger than 256 KiB"},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "not a regular file (a FIFO)"},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory"},
		{"a path in a pod name", func(p string) error {
			return os.WriteFile(p, bad(cachedPod{Node: "n", Namespace: "kube-system", Name: "../../secrets/x", Container: "c"}), 0o600)
		}, ""},
		{"a query in a container name", func(p string) error {
			return os.WriteFile(p, bad(cachedPod{Node: "n", Namespace: "kube-system", Name: "p", Container: "c&follow=true"}), 0o600)
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logged []string
			env := &hostio.Env{CacheDir: t.TempDir(), Log: func(level int, format string, args ...any) {
				logged = append(logged, fmt.Sprintf("%d "+format, append([]any{level}, args...)...))
			}}
			if err := c.make(filepath.Join(env.CacheDir, cacheName)); err != nil {
				t.Fatal(err)
			}
			if got := rememberedBounded(t, env, "k").Pods; len(got) != 0 {
				t.Errorf("remembered %+v from a bad cache", got)
			}
			all := strings.Join(logged, "\n")
			if c.log != "" && (!strings.Contains(all, c.log) || !strings.HasPrefix(all, "2 ") || !strings.Contains(all, cacheName)) {
				t.Errorf("logged %q, want at -v 2 the file and %q", all, c.log)
			}
			// A run saves over a corrupt file, and never over a FIFO or a directory.
			err := saveCache(env, "k", pods(1))
			switch c.name {
			case "a FIFO", "a directory":
				if err == nil {
					t.Errorf("saved over %s", c.name)
				}
			default:
				if err != nil {
					t.Errorf("saving over %s: %v", c.name, err)
				}
				if got := rememberedBounded(t, env, "k").Pods; len(got) != 1 {
					t.Errorf("after the save: %+v", got)
				}
			}
		})
	}
}

// TestCachingOff: no directory, --offline and a bundle's replay keep no cache.
func TestCachingOff(t *testing.T) {
	replay := hostio.NewTape()
	replay.Replay = true
	for name, env := range map[string]*hostio.Env{
		"no directory": {},
		"offline":      {CacheDir: "/x", Offline: true},
		"replay":       {CacheDir: "/x", Tape: replay},
	} {
		if caching(env) {
			t.Errorf("%s: caching", name)
		}
	}
	if !caching(&hostio.Env{CacheDir: "/x", Tape: hostio.NewTape()}) {
		t.Errorf("recording a bundle: not caching, but the live run may")
	}
}

// TestNeedsSave: a run writes the cache only when its pods changed or the
// RememberedReads ones are half way to stale, not on every run of a cron.
func TestNeedsSave(t *testing.T) {
	now := time.Now()
	fresh := &RememberedReads{Saved: now.Add(-time.Hour), Pods: pods(2)}
	for _, c := range []struct {
		name string
		pods []cachedPod
		last *RememberedReads
		want bool
	}{
		{"the same pods, saved an hour ago", pods(2), fresh, false},
		{"one pod more", pods(3), fresh, true},
		{"another pod on a node", []cachedPod{pods(1)[0], {Node: "n1", Namespace: "kube-system", Name: "other", Container: "node-dns"}}, fresh, true},
		{"none read now", nil, fresh, true},
		{"the same pods, half a day old", pods(2), &RememberedReads{Saved: now.Add(-cacheFresh / 2), Pods: pods(2)}, true},
		{"nothing remembered, nothing read (every kubelet unreachable)", nil, &RememberedReads{}, false},
	} {
		if got := needsSave(c.pods, c.last, now); got != c.want {
			t.Errorf("%s: needsSave = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCacheInAnUntrustedDirectory: a cache directory another user may
// write (theirs, or open to every user) is neither read nor written: the
// run remembers nothing, says why at -v 2, and leaves the file as it was.
func TestCacheInAnUntrustedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to give the directory to another user")
	}
	good, _ := json.Marshal(cacheFile{Version: cacheVersion, Targets: map[string]cachedTarget{"k": {Saved: time.Now(), Pods: pods(1)}}})
	for name, spoil := range map[string]func(dir string) error{
		"another user's":     func(dir string) error { return os.Chown(dir, 65534, 65534) },
		"open to every user": func(dir string) error { return os.Chmod(dir, 0o777) },
	} {
		t.Run(name, func(t *testing.T) {
			var logged []string
			env := &hostio.Env{CacheDir: t.TempDir(), Log: func(level int, format string, args ...any) {
				logged = append(logged, fmt.Sprintf("%d "+format, append([]any{level}, args...)...))
			}}
			file := filepath.Join(env.CacheDir, cacheName)
			if err := os.WriteFile(file, good, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := spoil(env.CacheDir); err != nil {
				t.Fatal(err)
			}
			if got := rememberedBounded(t, env, "k").Pods; len(got) != 0 {
				t.Errorf("remembered %+v from %s directory", got, name)
			}
			if all := strings.Join(logged, "\n"); !strings.HasPrefix(all, "2 ") || !strings.Contains(all, env.CacheDir+" is owned by uid") {
				t.Errorf("logged %q, want at -v 2 the directory, its owner and mode", all)
			}
			if err := saveCache(env, "k", pods(2)); err == nil {
				t.Errorf("saved in %s directory", name)
			}
			if b, _ := os.ReadFile(file); string(b) != string(good) {
				t.Errorf("the file was changed: %s", b)
			}
		})
	}
}
