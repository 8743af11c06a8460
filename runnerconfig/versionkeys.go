package runnerconfig

import (
	"bufio"
	"embed"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// keyLists are the key lists read from gitlab-runner's struct source, one
// per release line; internal/source/runnerversion/keygen writes them and
// TestKeyListsFromSource regenerates them from testdata/src/<version>.
//
//go:embed testdata/gitlab-runner-v*-keys.txt
var keyLists embed.FS

var keyListName = lazyre.MustCompile(`^gitlab-runner-v(\d+)\.(\d+)\.(\d+)-keys\.txt$`)

// versionPrefix matches what the runner prints as its version: "19.3.0",
// "v19.3.0", "19.4.0~pre.123.gabcdef12", "19.3.0-rc1".
var versionPrefix = lazyre.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?(?:$|[~+-])`)

type keyList struct {
	version      string // "19.3.0"
	major, minor int
	patch        int
	paths        []string
}

var (
	keyListsOnce sync.Once
	keyListsAll  []keyList // sorted by version
	keyListsErr  error
)

func loadKeyLists() {
	ents, err := keyLists.ReadDir("testdata")
	if err != nil {
		keyListsErr = err
		return
	}
	for _, e := range ents {
		m := keyListName().FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		data, err := keyLists.ReadFile(path.Join("testdata", e.Name()))
		if err != nil {
			keyListsErr = err
			return
		}
		l := keyList{version: m[1] + "." + m[2] + "." + m[3]}
		l.major, _ = strconv.Atoi(m[1])
		l.minor, _ = strconv.Atoi(m[2])
		l.patch, _ = strconv.Atoi(m[3])
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			line := sc.Text()
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p, _, ok := strings.Cut(line, "\t")
			if !ok {
				keyListsErr = fmt.Errorf("%s: malformed line %q", e.Name(), line)
				return
			}
			l.paths = append(l.paths, p)
		}
		keyListsAll = append(keyListsAll, l)
	}
	sort.Slice(keyListsAll, func(i, j int) bool {
		a, b := keyListsAll[i], keyListsAll[j]
		if a.major != b.major {
			return a.major < b.major
		}
		if a.minor != b.minor {
			return a.minor < b.minor
		}
		return a.patch < b.patch
	})
}

func keyListsLoaded() []keyList {
	keyListsOnce.Do(loadKeyLists)
	if keyListsErr != nil {
		panic("runnerconfig: embedded key lists: " + keyListsErr.Error())
	}
	return keyListsAll
}

// KeysFor returns the set of dotted key paths (e.g.
// "runners.kubernetes.pull_policy") the runner of that version reads; ok is
// false for an unknown version. The version is matched by major.minor only
// ("19.2.1", "v19.3.0" and "19.4.0~pre.12.gabcdef12" are 19.2, 19.3 and 19.4),
// on the ground that patch releases do not change config structs (true of
// 19.2.0 to 19.2.2); within a minor the newest list wins. Array-of-tables
// elements have no index: "runners.docker.services.name". Every call returns
// a new map.
//
// The 19.4 list was read from gitlab-runner's main branch before any 19.4
// tag existed (see the header of testdata/gitlab-runner-v19.4.0-keys.txt).
func KeysFor(version string) (keys map[string]bool, ok bool) {
	m := versionPrefix().FindStringSubmatch(strings.TrimSpace(version))
	if m == nil {
		return nil, false
	}
	major, err1 := strconv.Atoi(m[1])
	minor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	lists := keyListsLoaded()
	for i := len(lists) - 1; i >= 0; i-- {
		l := lists[i]
		if l.major == major && l.minor == minor {
			keys = make(map[string]bool, len(l.paths))
			for _, p := range l.paths {
				keys[p] = true
			}
			return keys, true
		}
	}
	return nil, false
}

// KnownVersions lists the versions key lists were read from, oldest first:
// "19.2.1", "19.3.0", ...
func KnownVersions() []string {
	lists := keyListsLoaded()
	out := make([]string, len(lists))
	for i, l := range lists {
		out[i] = l.version
	}
	return out
}
