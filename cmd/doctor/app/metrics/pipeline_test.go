package metrics

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
)

// TestPipeline goes through the engine and report.Build as doctor run does:
// checks that pass, fail, cannot check and observe, their results built
// into a report, its observations collected with Observations, written and
// parsed back.
func TestPipeline(t *testing.T) {
	doc := checks.Doc{Cause: "a cause", Symptom: "a symptom", Fix: checks.Text("a fix"), Verify: checks.Text("a command")}
	notAfter := time.Date(2026, 11, 29, 12, 30, 0, 0, time.UTC)
	catalog := []*checks.Check{
		{ID: "good", Title: "All is well", Severity: checks.Error, Doc: doc, Run: func(p *checks.Pass) error {
			p.Observe(checks.Observation{Name: "cert_expiry_timestamp_seconds", Value: float64(notAfter.Unix()),
				Labels: map[string]string{"subject": "CN=tenant"}})
			return nil
		}},
		{ID: "bad", Title: "Something is wrong", Severity: checks.Warning, Doc: doc, Run: func(p *checks.Pass) error {
			p.Report(checks.Finding{Cause: "one", Evidence: []checks.Evidence{{Source: "a", Detail: "x"}}})
			p.Report(checks.Finding{Cause: "two", Severity: checks.Critical, Evidence: []checks.Evidence{{Source: "b", Detail: "y"}}})
			return nil
		}},
		{ID: "broken", Title: "Cannot tell", Severity: checks.Error, Doc: doc, Run: func(p *checks.Pass) error {
			return errors.New("could not look")
		}},
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	res, err := checks.Run(t.Context(), &hostio.Env{Root: t.TempDir(), Offline: true, Clock: now}, catalog, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := report.Build(res, nil, "test", now)
	path := filepath.Join(t.TempDir(), "doctor.prom")
	if err := WriteTextfile(path, rep, Observations(res)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, b)
	value := func(name string, labels map[string]string) (float64, bool) {
		for _, m := range mfs[name].GetMetric() {
			match := len(m.GetLabel()) == len(labels)
			for _, lp := range m.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					match = false
				}
			}
			if match {
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{CheckStatus, map[string]string{"check": "good", "runner": ""}, 1},
		{CheckStatus, map[string]string{"check": "bad", "runner": ""}, 0},
		{CheckStatus, map[string]string{"check": "broken", "runner": ""}, -1},
		{Findings, map[string]string{"check": "bad", "runner": "", "severity": "warning"}, 1},
		{Findings, map[string]string{"check": "bad", "runner": "", "severity": "critical"}, 1},
		{Findings, map[string]string{"check": "bad", "runner": "", "severity": "error"}, 0},
		{Findings, map[string]string{"check": "good", "runner": "", "severity": "critical"}, 0},
		{CertExpiry, map[string]string{"runner": "", "subject": "CN=tenant"}, float64(notAfter.Unix())},
		{LastRunTimestamp, map[string]string{}, float64(now.Unix())},
	} {
		got, ok := value(c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v\n%s", c.name, c.labels, got, ok, c.want, b)
		}
	}
	if _, ok := value(Findings, map[string]string{"check": "broken", "runner": "", "severity": "error"}); ok {
		t.Errorf("a check that could not check has a findings count")
	}
	if d, ok := value(RunDuration, map[string]string{}); !ok || d < 0 || d > 10 {
		t.Errorf("%s = %v", RunDuration, d)
	}
}
