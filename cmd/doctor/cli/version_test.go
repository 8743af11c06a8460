package cli

import (
	"encoding/json"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

func TestVersionFromBuildInfo(t *testing.T) {
	for name, tc := range map[string]struct {
		bi   *debug.BuildInfo
		want VersionInfo
	}{
		"go build in a checkout: the vcs stamp": {
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "55279d6b1c2a8f0e9d3c4b5a69788796a5b4c3d2"},
				{Key: "vcs.time", Value: "2026-11-29T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			VersionInfo{Version: defaultVersion, Commit: "55279d6b1c2a8f0e9d3c4b5a69788796a5b4c3d2", Date: "2026-11-29T12:00:00Z", Modified: true, Go: "go1.26.8"},
		},
		"go install @latest: a pseudo-version": {
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261129120000-55279d6b1c2a"}},
			VersionInfo{Version: "v0.0.0-20261129120000-55279d6b1c2a", Commit: "55279d6b1c2a", Date: "2026-11-29T12:00:00Z", Go: "go1.26.8"},
		},
		"a pseudo-version after a tag, dirty": {
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.1-0.20261129120000-55279d6b1c2a+dirty"}},
			VersionInfo{Version: "v0.1.1-0.20261129120000-55279d6b1c2a+dirty", Commit: "55279d6b1c2a", Date: "2026-11-29T12:00:00Z", Modified: true, Go: "go1.26.8"},
		},
		"a tagged release": {
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.2.0"}},
			VersionInfo{Version: "v0.2.0", Go: "go1.26.8"},
		},
		"no build info": {nil, VersionInfo{Version: defaultVersion, Go: runtime.Version()}},
	} {
		if got := versionFrom(tc.bi, tc.bi != nil); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

// The built binary carries its commit: go build stamps it from the
// checkout, and doctor version -o json reports it.
func TestVersionOfTheBuiltBinary(t *testing.T) {
	bin := cmdtest.BuildDoctor(t)
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("doctor version -o json: %v", err)
	}
	var v VersionInfo
	cmdtest.NoErr(t, json.Unmarshal(out, &v))
	if v.Version == "" || v.Go != runtime.Version() {
		t.Errorf("version %+v, want a version and Go %s", v, runtime.Version())
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v (the test runs in doctor's checkout)", err)
	}
	if want := strings.TrimSpace(string(head)); v.Commit != want || v.Date == "" {
		t.Errorf("commit %q date %q, want commit %s and its date", v.Commit, v.Date, want)
	}
	text, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(text), "commit "+v.Commit) {
		t.Errorf("doctor version: %v\n%s", err, text)
	}
}
