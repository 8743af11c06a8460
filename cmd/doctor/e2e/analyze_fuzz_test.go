package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// analyzeFixtures are the live runs whose bundles FuzzAnalyze rewrites:
// one healthy runner, and runs whose files break in different places.
var analyzeFixtures = []string{"healthy", "config-syntax-error", "kubeconfig-unparseable", "three-runners"}

// FuzzAnalyze hands doctor analyze a bundle of a fixture's live run whose
// tape.json is arbitrary: the tape is what a bundle from someone else's
// host controls (every file record, stat, listing and error replayed into
// the checks). An empty tape keeps the run's own. doctor analyze exits 3
// naming the file, or prints a report; no check panics (a panic is an
// unknown with "panic:"), and the analysis ends within its deadline.
func FuzzAnalyze(f *testing.F) {
	for i := range analyzeFixtures {
		f.Add(uint8(i), []byte{})
	}
	f.Add(uint8(0), []byte(`{"files":{"/etc/gitlab-runner/config.toml":{"read":true,"stat":{"mode":"x"}}}}`))
	f.Add(uint8(1), []byte(`{"files":{"/proc":{"listed":true,"entries":[{"name":"4242","dir":true},{"name":"-1"},{"name":"../etc"}]}},"probes":{"dns x":{"value":"\"x\""}},"http":{"GET /":[null,{"status":-1}]}}`))
	f.Fuzz(func(t *testing.T, which uint8, tape []byte) {
		base := liveBundle(t, analyzeFixtures[int(which)%len(analyzeFixtures)])
		p := filepath.Join(t.TempDir(), "b.tar.gz")
		cmdtest.NoErr(t, os.WriteFile(p, withTape(t, base, tape), 0o600))
		start := time.Now()
		code, out, errs := runDoctor("analyze", p, "-o", "json", "--timeout", "10s")
		if took := time.Since(start); took > 15*time.Second {
			t.Fatalf("analyze took %s with --timeout 10s", took)
		}
		if strings.Contains(errs, "panic") || strings.Contains(out, "panic:") {
			t.Fatalf("exit %d: a panic:\n%.2000s\n%.2000s", code, errs, out)
		}
		if code == report.ExitCantRun && out == "" {
			if !strings.Contains(errs, p) {
				t.Fatalf("exit 3 without naming the bundle: %q", errs)
			}
			return
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("exit %d, no report: %v\n%.2000s\n%.2000s", code, err, out, errs)
		}
		if code != rep.Summary.ExitCode {
			t.Fatalf("exit %d, the report says %d", code, rep.Summary.ExitCode)
		}
	})
}

// liveBundles caches each fixture's bundle: the live run is made once.
var liveBundles sync.Map

func liveBundle(t *testing.T, name string) []byte {
	if b, ok := liveBundles.Load(name); ok {
		return b.([]byte)
	}
	dir := filepath.Join(cmdtest.Fixtures, name)
	var sc fixture.Scenario
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	cmdtest.NoErr(t, err)
	cmdtest.NoErr(t, json.Unmarshal(raw, &sc))
	root := fixture.LayRoot(t, dir, &sc)
	p := filepath.Join(t.TempDir(), "live.tar.gz")
	args := []string{"run", "--root", root, "--now", sc.Now, "-o", "json", "--bundle", p}
	for _, a := range sc.Args {
		args = append(args, strings.ReplaceAll(a, "$FIXTURE", dir))
	}
	if code, _, errs := runDoctor(args...); code == report.ExitCantRun {
		t.Fatalf("live run of %s: %s", name, errs)
	}
	b, err := os.ReadFile(p)
	cmdtest.NoErr(t, err)
	liveBundles.Store(name, b)
	return b
}

// withTape is the bundle with its tape.json replaced (kept when tape is
// empty), every other entry as it was.
func withTape(t *testing.T, bundle, tape []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(bundle))
	cmdtest.NoErr(t, err)
	tr := tar.NewReader(zr)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		cmdtest.NoErr(t, err)
		b, err := io.ReadAll(tr)
		cmdtest.NoErr(t, err)
		if strings.HasSuffix(h.Name, "/tape.json") && len(tape) > 0 {
			b = tape
		}
		h.Size = int64(len(b))
		cmdtest.NoErr(t, tw.WriteHeader(h))
		_, err = tw.Write(b)
		cmdtest.NoErr(t, err)
	}
	cmdtest.NoErr(t, tw.Close())
	cmdtest.NoErr(t, zw.Close())
	return buf.Bytes()
}
