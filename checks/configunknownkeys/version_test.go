package configunknownkeys

import (
	"errors"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/source/runnerversion"
)

// A key 19.4 added is read by a 19.4 runner, ignored by 19.3, and named
// with the version that reads it when the runner's version is unknown.
func TestReadSinceFollowsTheRunnersVersion(t *testing.T) {
	const key = "runners.kubernetes.suspend_pvc_size"
	v := func(s string) *hostfacts.Version {
		return &hostfacts.Version{Version: runnerversion.Version{Version: s}}
	}
	if _, read := readSince(v("19.4.0"), key); !read {
		t.Errorf("19.4.0 does not read %s", key)
	}
	if since, read := readSince(v("19.3.0"), key); read || since != "19.4.0" {
		t.Errorf("19.3.0: since %q read %v, want since 19.4.0", since, read)
	}
	if since, read := readSince(&hostfacts.Version{Err: errors.New("no binary")}, key); read || since != "19.4.0" {
		t.Errorf("unknown version: since %q read %v", since, read)
	}
	if since, read := readSince(v("19.4.0"), "runners.kubernetes.image_pull_policy"); read || since != "" {
		t.Errorf("a key no version reads: since %q read %v", since, read)
	}
}
