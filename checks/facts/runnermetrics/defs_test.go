package runnermetrics_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	rm "github.com/socialwebcomputer/doctor/checks/facts/runnermetrics"
	"github.com/socialwebcomputer/doctor/checks/facts/runnermetrics/runnermetricstest"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// TestDefsAreTheRunnersOwn: every family of Defs, as client_golang
// gathers the runner's v19.3.0 collectors (runnermetricstest declares
// them as the runner's source does), has the name, type, help and labels
// Defs gives for v19.3.0.
func TestDefsAreTheRunnersOwn(t *testing.T) {
	reg := runnermetricstest.New("", 4)
	reg.ConfigLoadingError.Add(1)
	reg.ConfigLoaded.Add(1)
	reg.APIStatuses.WithLabelValues("a", "s", "request_job", "403", "post").Inc()
	reg.APIRetries.WithLabelValues("/api/v4/jobs/request", "post").Inc()
	reg.HealthCheckFailures.WithLabelValues("a", "n", "s").Inc()
	reg.Failed("a", "n", "script_failure", 1)
	reg.Builds("a", "n", "s", "running", 1)
	reg.Limit("a", "n", "s", 1)
	reg.Requests("a", "s", 1, 1, 1, 1)
	fams, err := reg.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		got[f.GetName()] = f
	}
	for _, d := range rm.Defs {
		f := got[d.Name]
		if f == nil {
			t.Errorf("%s: the runner's registry has no such family", d.Name)
			continue
		}
		if f.GetType() != d.Type || f.GetHelp() != d.Help {
			t.Errorf("%s: the runner defines a %s with help %q; Defs says a %s with %q", d.Name, f.GetType(), f.GetHelp(), d.Type, d.Help)
		}
		want, exists, known := d.LabelsAt(runnermetricstest.Version)
		if !exists || !known {
			t.Errorf("%s: Defs has no labels for v%s", d.Name, runnermetricstest.Version)
		}
		var labels []string
		for _, lp := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		slices.Sort(labels)
		if !slices.Equal(labels, want) {
			t.Errorf("%s: the runner's labels are %v, Defs says %v", d.Name, labels, want)
		}
	}
}

func TestLabelsAtFollowsTheTags(t *testing.T) {
	d := rm.DefOf(rm.APIRequestStatuses)
	for v, want := range map[string]string{
		"15.0.0": "endpoint,runner,status", "15.7.3": "endpoint,runner,status", "15.8.0": "endpoint,runner,status,system_id",
		"18.2.1": "endpoint,runner,status,system_id", "18.3.0": "endpoint,method,runner,status,system_id",
		"19.4.0~pre.12.gd79f3e7b": "endpoint,method,runner,status,system_id",
	} {
		got, exists, known := d.LabelsAt(v)
		if !exists || !known || strings.Join(got, ",") != want {
			t.Errorf("LabelsAt(%s) = %v %v %v, want %s", v, got, exists, known, want)
		}
	}
	if _, exists, known := rm.DefOf(rm.HealthCheckFailures).LabelsAt("15.10.2"); exists || !known {
		t.Errorf("worker_health_check_failures_total exists at v15.10.2: it came in v15.11.0")
	}
	if _, _, known := d.LabelsAt("14.10.0"); known {
		t.Error("v14.10.0 is older than the definitions doctor holds")
	}
}

// ShortTokens: the runner label of each token shape, as
// helpers/shorten_token.go shortens it at v18.2.0 and later (first) and
// before (second).
func TestShortTokens(t *testing.T) {
	for token, want := range map[string][]string{
		"glrt-t1_AbCdEfGhIjKlMnOp": {"AbCdEfGhI", "t1_AbCdEf"},
		"glrt-AbCdEfGhIjKlMnOp":    {"AbCdEfGhI"},
		"GR1348941AbCdEfGhIjKlMn":  {"AbCdEfGhI", "GR1348941AbCdEfGh"},
		"legacytoken0123":          {"legacytok", "legacyto"},
		"short":                    {"short"},
		"":                         nil,
	} {
		if got := rm.ShortTokens(token); !slices.Equal(got, want) {
			t.Errorf("ShortTokens(%q) = %v, want %v", token, got, want)
		}
	}
}

// A scrape's record survives a bundle: its error, its samples, and the
// runner each names, never the runner label.
func TestScrapeRecordsWhatItKept(t *testing.T) {
	tape := hostio.NewTape()
	env := &hostio.Env{Tape: tape}
	want := &rm.Scrape{Err: errors.New("no answer within 1s"), Version: "19.3.0",
		Samples: []rm.Sample{{Name: rm.Concurrent, Labels: map[string]string{}, Value: 4}}}
	if _, err := hostio.ProbeErr(env, "runner-metrics", "http://127.0.0.1:9252/metrics", func() (*rm.Scrape, error) { return want, nil }); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(tape)
	if err != nil {
		t.Fatal(err)
	}
	replay := hostio.NewTape()
	if err := json.Unmarshal(raw, replay); err != nil {
		t.Fatal(err)
	}
	replay.Replay = true
	got, err := hostio.ProbeErr(&hostio.Env{Tape: replay}, "runner-metrics", "http://127.0.0.1:9252/metrics", func() (*rm.Scrape, error) {
		t.Fatal("replay ran the probe")
		return nil, nil
	})
	if err != nil || got == nil || got.Err == nil || !hostio.IsTimeout(got.Err) && got.Err.Error() != want.Err.Error() ||
		got.Version != "19.3.0" || len(got.Samples) != 1 || got.Samples[0].Value != 4 {
		t.Fatalf("replayed %+v, %v", got, err)
	}
}
