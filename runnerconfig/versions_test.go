package runnerconfig

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/source/runnerversion/keylist"
)

var keyListFile = regexp.MustCompile(`^gitlab-runner-(v\d+\.\d+\.\d+)-keys\.txt$`)

// keyListFiles maps each testdata/gitlab-runner-<version>-keys.txt to its
// version ("v19.3.0").
func keyListFiles(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if m := keyListFile.FindStringSubmatch(e.Name()); m != nil {
			out[e.Name()] = m[1]
		}
	}
	if len(out) < 3 {
		t.Fatalf("only %d key lists in testdata", len(out))
	}
	return out
}

// keyListLines is the list without its comment header.
func keyListLines(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(string(readFile(t, name)), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func diffLines(t *testing.T, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	gotSet, wantSet := map[string]bool{}, map[string]bool{}
	for _, l := range got {
		gotSet[l] = true
	}
	for _, l := range want {
		wantSet[l] = true
		if !gotSet[l] {
			t.Errorf("missing: %s", l)
		}
	}
	for _, l := range got {
		if !wantSet[l] {
			t.Errorf("extra:   %s", l)
		}
	}
	if !t.Failed() {
		t.Errorf("same lines, different order")
	}
}

// TestKeyListsFromSource runs the generator (the walk behind
// internal/source/runnerversion/keygen) on the trimmed copy of each version's
// struct sources in testdata/src/<version> and requires exactly the
// committed list. For v19.2.1 that closes the loop: TestKeysMatchRunner
// checks our Go types against the same list.
func TestKeyListsFromSource(t *testing.T) {
	files := keyListFiles(t)
	srcs, err := filepath.Glob("testdata/src/v*")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, v := range files {
		listed[v] = true
	}
	for _, s := range srcs {
		if !listed[filepath.Base(s)] {
			t.Errorf("%s has no key list", s)
		}
	}
	for name, v := range files {
		t.Run(v, func(t *testing.T) {
			res, err := keylist.Generate(filepath.Join("testdata", "src", v), keylist.DefaultModule)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range res.Lines {
				got = append(got, l.String())
			}
			diffLines(t, got, keyListLines(t, name))
		})
	}
}

// TestKeyListFormat checks what the lists promise: a comment header, then
// tab-separated path, kind and (for structs only) type, every path unique
// and below a struct line.
func TestKeyListFormat(t *testing.T) {
	for name := range keyListFiles(t) {
		t.Run(name, func(t *testing.T) {
			data := string(readFile(t, name))
			if !strings.HasPrefix(data, "# Every key path config.toml can reach in gitlab-runner ") {
				t.Errorf("header: %.80q", data)
			}
			kinds := map[string]string{}
			for _, l := range keyListLines(t, name) {
				f := strings.Split(l, "\t")
				isStruct := len(f) > 1 && strings.HasSuffix(f[1], "struct")
				if (isStruct && len(f) != 3) || (!isStruct && len(f) != 2) || f[0] == "" {
					t.Errorf("malformed: %q", l)
					continue
				}
				if _, dup := kinds[f[0]]; dup {
					t.Errorf("duplicate: %s", f[0])
				}
				kinds[f[0]] = f[1]
				if i := strings.LastIndex(f[0], "."); i >= 0 {
					if k, ok := kinds[f[0][:i]]; !ok || !strings.HasSuffix(k, "struct") {
						t.Errorf("%s: parent is not a struct line before it", f[0])
					}
				}
			}
		})
	}
}

func TestKeysFor(t *testing.T) {
	if got, want := KnownVersions(), []string{"19.2.1", "19.3.0", "19.4.0"}; !slices.Equal(got, want) {
		t.Errorf("KnownVersions() = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		version string
		list    string // "" for unknown
	}{
		{"19.2.1", "gitlab-runner-v19.2.1-keys.txt"},
		{"19.2.0", "gitlab-runner-v19.2.1-keys.txt"},
		{"v19.2.2", "gitlab-runner-v19.2.1-keys.txt"},
		{"v19.3.0", "gitlab-runner-v19.3.0-keys.txt"},
		{"19.3.1", "gitlab-runner-v19.3.0-keys.txt"},
		{" 19.3.0\n", "gitlab-runner-v19.3.0-keys.txt"},
		{"19.4.0~pre", "gitlab-runner-v19.4.0-keys.txt"},
		{"19.4.0~pre.123.gd79f3e7b", "gitlab-runner-v19.4.0-keys.txt"},
		{"19.4.0-rc1", "gitlab-runner-v19.4.0-keys.txt"},
		{"19.4", "gitlab-runner-v19.4.0-keys.txt"},
		{"19.1.2", ""},
		{"19.5.0", ""},
		{"18.11.4", ""},
		{"119.3.0", ""},
		{"19.30.0", ""},
		{"19.3.0beta", ""},
		{"19", ""},
		{"latest", ""},
		{"development version", ""},
		{"", ""},
	} {
		keys, ok := KeysFor(tc.version)
		if tc.list == "" {
			if ok || keys != nil {
				t.Errorf("KeysFor(%q) = %d keys, %v; want unknown", tc.version, len(keys), ok)
			}
			continue
		}
		if !ok {
			t.Errorf("KeysFor(%q) unknown, want %s", tc.version, tc.list)
			continue
		}
		var want []string
		for _, l := range keyListLines(t, tc.list) {
			want = append(want, strings.Split(l, "\t")[0])
		}
		var got []string
		for k := range keys {
			got = append(got, k)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("KeysFor(%q): %d keys, want the %d of %s", tc.version, len(got), len(want), tc.list)
		}
	}

	a, _ := KeysFor("19.3.0")
	delete(a, "runners.executor")
	if b, _ := KeysFor("19.3.0"); !b["runners.executor"] {
		t.Error("KeysFor shares its map between calls")
	}
}

// TestKeyDifferences pins what changed between the versions, as reported:
// 19.3.0 reads the same keys as 19.2.1, and 19.4 (main) adds four suspend_*
// keys and removes none.
func TestKeyDifferences(t *testing.T) {
	diff := func(from, to string) (added, removed []string) {
		a, _ := KeysFor(from)
		b, _ := KeysFor(to)
		for k := range b {
			if !a[k] {
				added = append(added, k)
			}
		}
		for k := range a {
			if !b[k] {
				removed = append(removed, k)
			}
		}
		sort.Strings(added)
		sort.Strings(removed)
		return
	}
	if added, removed := diff("19.2", "19.3"); len(added)+len(removed) != 0 {
		t.Errorf("19.2 -> 19.3: added %q, removed %q; want none", added, removed)
	}
	if got, want := keyListLines(t, "gitlab-runner-v19.3.0-keys.txt"), keyListLines(t, "gitlab-runner-v19.2.1-keys.txt"); !slices.Equal(got, want) {
		t.Errorf("19.3.0 differs from 19.2.1 in kinds or order")
	}
	added, removed := diff("19.3", "19.4")
	wantAdded := []string{
		"runners.docker.services.suspend_data_path",
		"runners.kubernetes.services.suspend_data_path",
		"runners.kubernetes.suspend_pvc_size",
		"runners.kubernetes.suspend_pvc_storage_class",
	}
	if !slices.Equal(added, wantAdded) || len(removed) != 0 {
		t.Errorf("19.3 -> 19.4: added %q, removed %q; want added %q", added, removed, wantAdded)
	}
}
