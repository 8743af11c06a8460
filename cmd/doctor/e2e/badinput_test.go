package e2e

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

const (
	configPath = "/etc/gitlab-runner/config.toml"
	kubePath   = "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"
)

// garbage is fixed pseudo-random bytes: binary, not UTF-8, not TOML or YAML.
func garbage() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// healthyRoot lays out the healthy fixture, the base every bad input spoils.
func healthyRoot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(cmdtest.Fixtures, "healthy")
	var sc fixture.Scenario
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	cmdtest.NoErr(t, err)
	cmdtest.NoErr(t, json.Unmarshal(raw, &sc))
	return fixture.LayRoot(t, dir, &sc)
}

func findingsText(rep *report.Report, check string) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		if f.Check != check {
			continue
		}
		b.WriteString(f.Cause + "\n")
		for _, e := range f.Evidence {
			b.WriteString(e.Source + ": " + e.Detail + "\n")
		}
	}
	return b.String()
}

func writeSpoiled(t *testing.T, p string, b []byte) {
	t.Helper()
	cmdtest.NoErr(t, os.WriteFile(p, b, 0o600))
}
