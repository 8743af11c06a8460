package runnerversion

import (
	"strings"
	"testing"
)

func TestFromImage(t *testing.T) {
	for _, tc := range []struct {
		ref, want, err string
	}{
		{"registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner:v19.3.1", "19.3.1", ""},
		{"registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner:v19.3.1@sha256:" + strings.Repeat("ab", 32), "19.3.1", ""},
		{"registry.example.com:5000/gitlab/gitlab-runner:v19.2.1", "19.2.1", ""},
		{"localhost:5000/runner:19.3.0", "19.3.0", ""},
		{"gitlab/gitlab-runner:alpine-v18.10.1", "18.10.1", ""},
		{"gitlab/gitlab-runner:ubuntu-v19.3.0", "19.3.0", ""},
		{"gitlab/gitlab-runner:alpine3.21-v19.3.0", "19.3.0", ""},
		{"registry.gitlab.com/gitlab-org/gitlab-runner:v19.4.0-rc1", "19.4.0-rc1", ""},
		{"gitlab/gitlab-runner:v19.3.1-fips", "19.3.1", ""},
		{" gitlab/gitlab-runner:v19.3.1\n", "19.3.1", ""},
		{"gitlab/gitlab-runner:latest", "", `tag "latest" names no version`},
		{"gitlab/gitlab-runner:alpine", "", `tag "alpine" names no version`},
		{"gitlab/gitlab-runner:bleeding", "", "names no version"},
		{"gitlab/gitlab-runner:v19.3", "", "names no version"},
		{"gitlab/gitlab-runner", "", "no tag (means latest)"},
		{"registry.example.com:5000/gitlab/gitlab-runner", "", "no tag (means latest)"},
		{"gitlab/gitlab-runner@sha256:" + strings.Repeat("ab", 32), "", "digest only"},
		{"registry.example.com:5000/runner@sha256:" + strings.Repeat("ab", 32), "", "digest only"},
		{"", "", "empty image reference"},
		{":v19.3.1", "", "malformed"},
	} {
		got, err := FromImage(tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("FromImage(%q) = %+v, %v; want error %q", tc.ref, got, err, tc.err)
			}
			continue
		}
		want := Version{Version: tc.want, Source: "image tag of " + strings.TrimSpace(tc.ref)}
		if err != nil || got != want {
			t.Errorf("FromImage(%q) = %+v, %v; want %+v", tc.ref, got, err, want)
		}
	}
}
