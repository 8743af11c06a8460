package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// analyzed is what analyze of a bundle must repeat of the live report: every
// finding (rank, check, runner, severity, cause, evidence, fix, causes,
// fingerprint) and every check's status and reason.
type analyzed struct {
	Findings []report.Finding
	Checks   []report.CheckStatus
	Exit     int
}

func comparable(rep *report.Report) analyzed {
	cs := append([]report.CheckStatus(nil), rep.Checks...)
	for i := range cs {
		cs[i].DurationMs = 0 // wall time, the one thing a replay does not repeat
	}
	return analyzed{Findings: rep.Findings, Checks: cs, Exit: rep.Summary.ExitCode}
}

// assertAnalyzeEqualsLive runs doctor analyze on the bundle the live run
// wrote, and fails unless it found what the live run found. The bundle
// itself must hold no secret.
func assertAnalyzeEqualsLive(t *testing.T, live *report.Report, bundlePath, root string) {
	t.Helper()
	code, out, errs := runDoctor("analyze", bundlePath, "-o", "json")
	var got report.Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("analyze: exit %d, %s: %v\n%s", code, errs, err, out)
	}
	if code != live.Summary.ExitCode {
		t.Errorf("analyze exit %d, the live run's %d", code, live.Summary.ExitCode)
	}
	want, have := comparable(live), comparable(&got)
	if !reflect.DeepEqual(want, have) {
		wj, _ := json.MarshalIndent(want, "", " ")
		hj, _ := json.MarshalIndent(have, "", " ")
		t.Errorf("analyze differs from the live run:\n%s", cmdtest.FirstDifference(string(wj), string(hj)))
		if keep := os.Getenv("DOCTOR_KEEP_BUNDLES"); keep != "" {
			b, _ := os.ReadFile(bundlePath)
			_ = os.WriteFile(filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_")+".tar.gz"), b, 0o600)
		}
	}
	AssertBundleHasNoSecrets(t, bundlePath, root)
	assertAnalyzeHoldsHostileValues(t, live, bundlePath)
}

// assertAnalyzeHoldsHostileValues replays the bundle once more with every
// value any encoder is given wrapped in hostilefix.Mark: every fix of the
// live run (the real apiserver's names, the real hosts' paths) keeps its
// structure (hostilefix.Compare). Replayed, the integration scenarios get
// the property TestFixesHoldHostileValues proves of the fixtures.
func assertAnalyzeHoldsHostileValues(t *testing.T, live *report.Report, bundlePath string) {
	t.Helper()
	restore := fixcode.SetTaint(hostilefix.Taint)
	_, out, errs := runDoctor("analyze", bundlePath, "-o", "json")
	restore()
	var got report.Report
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("analyze with hostile values: %s: %v\n%s", errs, err, out)
	}
	if len(got.Findings) != len(live.Findings) {
		t.Fatalf("analyze with hostile values: %d findings, the live run %d", len(got.Findings), len(live.Findings))
	}
	for i, f := range live.Findings {
		hostilefix.Compare(t, fmt.Sprintf("analyze with hostile values, finding %d (%s)", i+1, f.Check), f.FixSteps, got.Findings[i].FixSteps)
	}
}

// standInShape is what the bundle writer puts where a secret was: StandIn's
// mark and hash, or a stand-in shaped like the secret with the mark's word
// written into it (redact.StandInLike).
var standInShape = regexp.MustCompile(`REDACTED-[0-9a-f]{8}|[A-Za-z0-9_+/.-]*REDACTED[A-Za-z0-9_+/.-]*`)

// inlineData is a kubeconfig's *-data value, which the bundle keeps as
// base64 of stand-in keys and re-issued certificates.
var inlineData = regexp.MustCompile(`(?m)((?:client-certificate-data|client-key-data|certificate-authority-data)\s*:\s*"?)([A-Za-z0-9+/=]+)`)

// AssertBundleHasNoSecrets fails when a bundle carries a secret: a token or
// password that is not a stand-in, a bearer token, a long base64 run other
// than a kubeconfig's inline data, or any private key found under root.
func AssertBundleHasNoSecrets(t *testing.T, p, root string) {
	t.Helper()
	planted := map[string]bool{}
	_ = filepath.WalkDir(root, func(fp string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(fp)
		if err != nil || len(b) > 10<<20 {
			return nil
		}
		for _, k := range privateKeys(b) {
			planted[string(k)] = true
		}
		return nil
	})
	for name, body := range bundleContents(t, p) {
		for _, k := range privateKeys([]byte(body)) {
			if planted[string(k)] {
				t.Errorf("%s carries a private key of the host", name)
			}
		}
		body = inlineData.ReplaceAllString(body, "$1<inline data>")
		// Certificates and certificate requests (a CSR's spec.request) are
		// public: base64 of one is not a secret.
		body = base64Run.ReplaceAllStringFunc(body, func(m string) string {
			if raw, err := base64.StdEncoding.DecodeString(m); err == nil && bytes.HasPrefix(raw, []byte("-----BEGIN CERTIFICATE")) {
				return "<certificate>"
			}
			return m
		})
		plain := standInShape.ReplaceAllString(pemBlocks.ReplaceAllString(body, "<pem>"), "<stand-in>")
		plain = strings.ReplaceAll(plain, "glrt-<stand-in>", "<stand-in>")
		if m := fixture.SecretShapes.FindString(plain); m != "" {
			t.Errorf("%s carries a secret-shaped string: %.40q", name, m)
		}
	}
}

// privateKeys are the DER bytes of every private key in b, in PEM or in a
// kubeconfig's base64 inline data.
func privateKeys(b []byte) [][]byte {
	texts := [][]byte{b}
	for _, m := range inlineData.FindAllSubmatch(b, -1) {
		if raw, err := base64.StdEncoding.DecodeString(string(m[2])); err == nil {
			texts = append(texts, raw)
		}
	}
	var out [][]byte
	for _, tx := range texts {
		for _, m := range pemBlocks.FindAll(tx, -1) {
			if blk, _ := pem.Decode(m); blk != nil && strings.Contains(blk.Type, "PRIVATE KEY") {
				out = append(out, blk.Bytes)
			}
		}
	}
	return out
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{80,}={0,2}`)

var pemBlocks = regexp.MustCompile(`(?s)-----BEGIN [A-Z ]+-----.*?-----END [A-Z ]+-----`)

// bundleContents is every file of a bundle, by name.
func bundleContents(t *testing.T, p string) map[string]string {
	t.Helper()
	f, err := os.Open(p)
	cmdtest.NoErr(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	cmdtest.NoErr(t, err)
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		cmdtest.NoErr(t, err)
		b, err := io.ReadAll(tr)
		cmdtest.NoErr(t, err)
		out["bundle "+h.Name] = string(b)
	}
	return out
}

// Every fixture scenario, bundled and analyzed, finds what it found live.
func TestAnalyzeEqualsLiveOnEveryFixture(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(cmdtest.Fixtures, "*", "scenario.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, sj := range dirs {
		dir := filepath.Dir(sj)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var sc fixture.Scenario
			raw, err := os.ReadFile(sj)
			cmdtest.NoErr(t, err)
			cmdtest.NoErr(t, json.Unmarshal(raw, &sc))
			root := fixture.LayRoot(t, dir, &sc)
			b := filepath.Join(t.TempDir(), "b.tar.gz")
			args := []string{"run", "--root", root, "--now", sc.Now, "-o", "json", "--bundle", b}
			for _, a := range sc.Args {
				args = append(args, strings.ReplaceAll(a, "$FIXTURE", dir))
			}
			code, out, errs := runDoctor(args...)
			var live report.Report
			if err := json.Unmarshal([]byte(out), &live); err != nil {
				t.Fatalf("exit %d, %s: %v", code, errs, err)
			}
			assertAnalyzeEqualsLive(t, &live, b, root)
		})
	}
}

// A file that is not a bundle is exit 3 with a message naming it, never a
// panic; so is a FIFO, a directory, and garbage behind a gzip header.
func TestAnalyzeRefusesWhatIsNotABundle(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write([]byte("not a tar at all"))
	_ = w.Close()
	cases := map[string][]byte{"empty": {}, "garbage": []byte("\x00\x01garbage"), "gzip-not-tar": gz.Bytes()}
	for name, b := range cases {
		p := filepath.Join(dir, name)
		cmdtest.NoErr(t, os.WriteFile(p, b, 0o600))
		code, _, errs := runDoctor("analyze", p)
		if code != report.ExitCantRun || !strings.Contains(errs, p) {
			t.Errorf("%s: exit %d, stderr %q; want 3 naming the file", name, code, errs)
		}
	}
	code, _, errs := runDoctor("analyze", dir)
	if code != report.ExitCantRun || !strings.Contains(errs, "not a bundle") {
		t.Errorf("a directory: exit %d, %q", code, errs)
	}
}

// A fix is applied on the host the bundle came from: analyze's verify
// command is the doctor run that shows it worked there, with the live run's
// input flags, never doctor analyze of the same bundle.
func TestAnalyzeVerifiesWithDoctorRun(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "cert-expired")
	bundlePath := filepath.Join(t.TempDir(), "ticket.tar.gz")
	if code, _, errs := runDoctor("run", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z", "--bundle", bundlePath); code == report.ExitCantRun {
		t.Fatalf("run --bundle: exit %d, %s", code, errs)
	}
	_, out, _ := runDoctor("analyze", bundlePath)
	if !strings.Contains(out, "# verify\ndoctor run --offline --only cert-expiry --runner 1\n") || strings.Contains(out, "doctor analyze") {
		t.Errorf("analyze's verify command:\n%s", out)
	}
}
