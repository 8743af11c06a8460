package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const longPath = "/etc/gitlab-runner/tenant-ci/a-kubeconfig-path-that-is-longer-than-any-column-of-an-80-column-terminal.yaml"

// wideWorld is a report with what makes a table hard to fit: a long cause,
// a token longer than any column, a long runner name, evidence, a
// multi-line fix and a consequence.
func wideWorld() *Report {
	runner := &checks.RunnerRef{Index: 2, Name: "kcp-tenant-kubernetes-streamplace"}
	ca := &checks.Check{ID: "cert-expiry", Explains: []string{"api-auth"}}
	cb := &checks.Check{ID: "api-auth", Requires: []checks.Node{ca}}
	res := &checks.Result{
		Runners: []checks.Subject{{Ref: *runner, Executor: "kubernetes"}},
		Checks: []checks.CheckResult{
			{Check: ca, Runner: runner, Status: checks.StatusFail, Findings: []checks.Finding{{
				Check: "cert-expiry", Runner: runner, Severity: checks.Critical, Docs: "README.md#cert-expiry",
				Cause:    "The client certificate expired at 2026-11-29T11:00Z, 1h0m ago: the front answers 401 and every job fails at authentication; the file is " + longPath + " and nothing else changed.",
				Evidence: []checks.Evidence{{Source: longPath, Detail: "client certificate ECDSA P-256, CN=did:plc:ewvi7nxzyoun6zhxrhs64oiz, valid 2026-11-28T11:00Z to 2026-11-29T11:00Z"}},
				Fix: checks.Steps{
					checks.Say("Give the runner's service its KUBECONFIG with a systemd drop-in, /etc/systemd/system/gitlab-runner.service.d/kubeconfig.conf:"),
					checks.Unit("[Service]\nEnvironment=KUBECONFIG=" + longPath),
					checks.Say("Write it and restart the runner:"),
					checks.Sh("sudo systemctl daemon-reload\nsudo systemctl restart gitlab-runner.service"),
				},
			}}},
			{Check: cb, Runner: runner, Status: checks.StatusFail, Findings: []checks.Finding{{
				Check: "api-auth", Runner: runner, Severity: checks.Critical, Docs: "README.md#api-auth",
				Cause: "The cluster answers 401 Unauthorized to the kubeconfig's client certificate.",
				Fix:   checks.Text("Download a new kubeconfig."),
			}}},
		},
	}
	return Build(res, nil, "test", now)
}

func render(t *testing.T, rep *Report, format string, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderWith(&b, rep, format, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The table fits every width: no line is wider than the terminal but the
// verify lines (printed whole, for the terminal to wrap) and a line that is
// one token; no token is cut, in the findings nor in the fixes' prose (which
// wraps to the width); the verify lines are whole lines.
func TestTableFitsTheTerminal(t *testing.T) {
	rep := wideWorld()
	rep.Rerun = []string{"doctor", "run", "--root", "/srv/fixture"}
	for _, width := range []int{40, 60, 80, 99, 100, 120, 160, 200, 300} {
		for _, format := range []string{"table", "wide"} {
			for _, utf := range []bool{false, true} {
				out := render(t, rep, format, Options{Width: width, UTF8: utf})
				lines := strings.Split(out, "\n")
				verbatim := map[string]bool{}
				for _, f := range rep.Findings {
					if f.CausedBy == nil {
						for _, b := range f.FixSteps.Blocks() {
							for _, l := range strings.Split(b.Text, "\n") {
								verbatim[l] = true
							}
						}
						verbatim[verifyCommand(rep, f)] = true
					}
				}
				if b := wrap.Breaks(out, width, func(l string) bool { return verbatim[l] }); len(b) > 0 {
					t.Errorf("%s at %d: tokens broken by the terminal: %v\n%s", format, width, b, out)
				}
				for _, l := range lines {
					n := utf8.RuneCountInString(l)
					if n > width && !verbatim[l] && len(strings.Fields(strings.TrimPrefix(l, "# "))) > 1 {
						t.Errorf("%s at %d: line of %d columns: %q", format, width, n, l)
					}
					if strings.HasSuffix(l, " ") {
						t.Errorf("%s at %d: trailing space: %q", format, width, l)
					}
				}
				have := map[string]bool{}
				for _, l := range lines {
					have[l] = true
				}
				for l := range verbatim {
					if !have[l] {
						t.Errorf("%s at %d: verify line %q is not a line of its own:\n%s", format, width, l, out)
					}
				}
				for _, f := range rep.Findings {
					texts := []string{f.Cause}
					if f.CausedBy == nil {
						texts = append(texts, f.Fix)
					}
					if format == "wide" {
						for _, e := range f.Evidence {
							texts = append(texts, e.Source, e.Detail)
						}
					}
					for _, text := range texts {
						for _, tok := range strings.Fields(text) {
							if !containsToken(out, tok) {
								t.Errorf("%s at %d: token %q was cut:\n%s", format, width, tok, out)
							}
						}
					}
				}
				table := strings.Contains(out, "SEVERITY")
				if width < StackedBelow && table {
					t.Errorf("%s at %d: a table below %d columns:\n%s", format, width, StackedBelow, out)
				}
				// The path is a token of 104 columns: the FINDING column
				// holds it whole from 200 columns on.
				if format == "table" && width >= 200 && !table {
					t.Errorf("%s at %d: no table:\n%s", format, width, out)
				}
				for _, l := range lines {
					if strings.ContainsAny(l, "│┌┐┘├┤─|+") && !verbatim[l] {
						t.Errorf("%s at %d: a box border: %q", format, width, l)
					}
				}
				if !utf {
					for i := 0; i < len(out); i++ {
						if out[i] >= 0x80 {
							t.Fatalf("%s at %d: non-ASCII output without UTF-8:\n%s", format, width, out)
						}
					}
				}
			}
		}
	}
}

// containsToken says whether tok is a whole whitespace-separated token of
// some line of out.
func containsToken(out, tok string) bool {
	for _, l := range strings.Split(out, "\n") {
		for _, f := range strings.Fields(l) {
			if f == tok || strings.Contains(f, tok) && (strings.HasPrefix(f, tok) || strings.HasSuffix(f, tok)) {
				return true
			}
		}
	}
	return false
}

func TestGlyphs(t *testing.T) {
	rep := wideWorld()
	for _, tc := range []struct {
		utf8       bool
		want, none string
	}{{true, "× CRITICAL", "x CRITICAL"}, {false, "x CRITICAL", "×"}} {
		for _, width := range []int{80, 200} {
			out := render(t, rep, "table", Options{Width: width, UTF8: tc.utf8})
			if !strings.Contains(out, tc.want) || strings.Contains(out, tc.none) {
				t.Errorf("utf8=%v width %d: want %q and no %q:\n%s", tc.utf8, width, tc.want, tc.none, out)
			}
		}
	}
	out := render(t, rep, "table", Options{Width: 200, UTF8: true})
	if !strings.Contains(out, "└ api-auth") {
		t.Errorf("no tree glyph for the consequence:\n%s", out)
	}
}

func TestColourOnlyWhenAsked(t *testing.T) {
	rep := wideWorld()
	for _, width := range []int{80, 200} {
		if out := render(t, rep, "table", Options{Width: width}); strings.Contains(out, "\x1b[") {
			t.Errorf("colour at %d without Colour", width)
		}
		if out := render(t, rep, "table", Options{Width: width, Colour: true}); !strings.Contains(out, "\x1b[") {
			t.Errorf("no colour at %d with Colour", width)
		}
	}
}

// normalWorld is wideWorld without the token longer than a column, and
// with a runner name of the usual length.
func normalWorld() *Report {
	rep := wideWorld()
	for i := range rep.Findings {
		f := &rep.Findings[i]
		f.Runner = &checks.RunnerRef{Index: 2, Name: "kcp-tenant-kubernetes"}
		f.Cause = strings.ReplaceAll(f.Cause, longPath, "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml")
		for j := range f.Evidence {
			f.Evidence[j].Source = "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"
		}
	}
	return rep
}

// From StackedBelow columns on, findings are table rows.
func TestTableFromStackedBelow(t *testing.T) {
	rep := normalWorld()
	for _, width := range []int{StackedBelow, 120, 200} {
		if out := render(t, rep, "table", Options{Width: width}); !strings.HasPrefix(out, "#  SEVERITY") {
			t.Errorf("no table at %d:\n%s", width, out)
		}
	}
	if out := render(t, rep, "table", Options{Width: StackedBelow - 1}); strings.Contains(out, "SEVERITY") {
		t.Errorf("a table at %d:\n%s", StackedBelow-1, out)
	}
}

func TestWideAddsEvidenceAndFingerprint(t *testing.T) {
	rep := normalWorld()
	fp := rep.Findings[0].Fingerprint
	for _, width := range []int{80, 200} {
		table := render(t, rep, "table", Options{Width: width})
		wide := render(t, rep, "wide", Options{Width: width})
		if strings.Contains(table, fp) || strings.Contains(table, "ECDSA") {
			t.Errorf("table at %d shows evidence or fingerprint:\n%s", width, table)
		}
		if !strings.Contains(wide, fp) || !strings.Contains(wide, "ECDSA") {
			t.Errorf("wide at %d lacks evidence or fingerprint:\n%s", width, wide)
		}
	}
	if out := render(t, rep, "wide", Options{Width: 200}); !strings.Contains(out, "EVIDENCE") || !strings.Contains(out, "FINGERPRINT") {
		t.Errorf("wide at 200 has no evidence columns:\n%s", out)
	}
}

func TestSummaryPlurals(t *testing.T) {
	one := newWorld().check("a", nil).find("a", checks.Error).build()
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	out := flat(render(t, one, "table", Options{}))
	for _, want := range []string{"1 of 1 check ran", "1 error,", "0 warnings,", "(1 root cause)"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	two := newWorld().check("a", nil).check("b", nil).find("a", checks.Warning).find("b", checks.Warning).
		build(Ignore{Check: "a", Reason: "r"})
	out = flat(render(t, two, "table", Options{}))
	for _, want := range []string{"2 of 2 checks ran", "1 warning,", "0 errors,", "(1 root cause)", "hid 1 finding:"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"1 root causes", "1 checks", "(s)"} {
		if strings.Contains(out, bad) {
			t.Errorf("summary says %q:\n%s", bad, out)
		}
	}
}

func TestYAMLIsTheJSON(t *testing.T) {
	rep := wideWorld()
	var js, ym bytes.Buffer
	if err := RenderWith(&js, rep, "json", Options{}); err != nil {
		t.Fatal(err)
	}
	if err := RenderWith(&ym, rep, "yaml", Options{}); err != nil {
		t.Fatal(err)
	}
	fromYAML, err := yaml.YAMLToJSON(ym.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(js.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromYAML, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("yaml differs from json:\n%s", ym.String())
	}
}

func TestFingerprint(t *testing.T) {
	r1 := &checks.RunnerRef{Index: 1, Name: "a"}
	base := checks.Finding{Check: "runner-kubeconfig-env", Runner: r1, Cause: "no KUBECONFIG",
		Evidence: []checks.Evidence{{Source: "/proc/4242/environ", Detail: "4 variables"}, {Source: "/.kube/config", Detail: "missing"}}}
	fp := Fingerprint(base)
	if !ValidFingerprint(fp) {
		t.Fatalf("fingerprint %q has not the shape of one", fp)
	}
	same := base
	same.Cause, same.Fix, same.Severity = "reworded entirely", checks.Text("another fix"), checks.Warning
	same.Evidence = []checks.Evidence{{Source: "/.kube/config", Detail: "other"}, {Source: "/proc/5151/environ", Detail: "9 variables"}}
	same.Runner = &checks.RunnerRef{Index: 1, Name: "renamed"}
	if got := Fingerprint(same); got != fp {
		t.Errorf("wording, evidence order, pid or runner name changed the fingerprint: %s, want %s", got, fp)
	}
	for name, f := range map[string]func(*checks.Finding){
		"another runner":  func(f *checks.Finding) { f.Runner = &checks.RunnerRef{Index: 2, Name: "a"} },
		"host-wide":       func(f *checks.Finding) { f.Runner = nil },
		"another check":   func(f *checks.Finding) { f.Check = "kubeconfig-file" },
		"another source":  func(f *checks.Finding) { f.Evidence = f.Evidence[:1] },
		"a source added":  func(f *checks.Finding) { f.Evidence = append(f.Evidence, checks.Evidence{Source: "config.toml:9"}) },
		"no evidence":     func(f *checks.Finding) { f.Evidence = nil },
		"a source edited": func(f *checks.Finding) { f.Evidence = []checks.Evidence{{Source: "/.kube/config2"}, f.Evidence[0]} },
	} {
		g := base
		g.Evidence = append([]checks.Evidence{}, base.Evidence...)
		f(&g)
		if Fingerprint(g) == fp {
			t.Errorf("%s: same fingerprint %s", name, fp)
		}
	}
}

// ignoreWorld: cert-expiry fails for runners 1 and 2 (two findings for 2),
// api-auth is skipped, kubeconfig-file passes.
func ignoreWorld(ignores ...Ignore) *Report {
	r1, r2 := &checks.RunnerRef{Index: 1, Name: "one"}, &checks.RunnerRef{Index: 2, Name: "two"}
	ce, aa, kf := &checks.Check{ID: "cert-expiry"}, &checks.Check{ID: "api-auth"}, &checks.Check{ID: "kubeconfig-file"}
	find := func(r *checks.RunnerRef, src string) checks.Finding {
		return checks.Finding{Check: "cert-expiry", Runner: r, Severity: checks.Warning, Cause: "soon",
			Evidence: []checks.Evidence{{Source: src}}}
	}
	res := &checks.Result{
		Runners: []checks.Subject{{Ref: *r1}, {Ref: *r2}},
		Checks: []checks.CheckResult{
			{Check: kf, Status: checks.StatusPass},
			{Check: ce, Runner: r1, Status: checks.StatusFail, Findings: []checks.Finding{find(r1, "a.yaml")}},
			{Check: ce, Runner: r2, Status: checks.StatusFail, Findings: []checks.Finding{find(r2, "a.yaml"), find(r2, "b.yaml")}},
			{Check: aa, Runner: r1, Status: checks.StatusSkipped, Reason: "offline"},
			{Check: aa, Runner: r2, Status: checks.StatusSkipped, Reason: "offline"},
		},
	}
	return Build(res, ignores, "test", now)
}

func TestIgnoreForms(t *testing.T) {
	fpB := Fingerprint(checks.Finding{Check: "cert-expiry", Runner: &checks.RunnerRef{Index: 2}, Evidence: []checks.Evidence{{Source: "b.yaml"}}})
	for _, tc := range []struct {
		name     string
		ig       Ignore
		status   string
		matched  int
		left     int // findings left
		exit     int
		noteSays string
	}{
		{"every runner", Ignore{Check: "cert-expiry"}, IgnoreMatched, 3, 0, ExitOK, ""},
		{"* is every runner", Ignore{Check: "cert-expiry", Runner: "*"}, IgnoreMatched, 3, 0, ExitOK, ""},
		{"one runner by index", Ignore{Check: "cert-expiry", Runner: "2"}, IgnoreMatched, 2, 1, ExitWarning, ""},
		{"one runner by name", Ignore{Check: "cert-expiry", Runner: "one"}, IgnoreMatched, 1, 2, ExitWarning, ""},
		{"one finding", Ignore{Check: "cert-expiry", Fingerprint: fpB}, IgnoreMatched, 1, 2, ExitWarning, ""},
		{"one finding of one runner", Ignore{Check: "cert-expiry", Runner: "two", Fingerprint: fpB}, IgnoreMatched, 1, 2, ExitWarning, ""},
		{"the fingerprint of another runner", Ignore{Check: "cert-expiry", Runner: "1", Fingerprint: fpB}, IgnoreMatchedNothing, 0, 3, ExitWarning, "remove it"},
		{"a check that passed", Ignore{Check: "kubeconfig-file"}, IgnoreMatchedNothing, 0, 3, ExitWarning, "remove it"},
		{"a skipped check", Ignore{Check: "api-auth"}, IgnoreNotEvaluated, 0, 3, ExitWarning, "skipped: offline"},
		{"a skipped check of one runner", Ignore{Check: "api-auth", Runner: "2"}, IgnoreNotEvaluated, 0, 3, ExitWarning, `#2 "two" skipped: offline`},
		{"a check that was not selected", Ignore{Check: "runner-rbac"}, IgnoreNotEvaluated, 0, 3, ExitWarning, "not selected"},
		{"a runner that is not there", Ignore{Check: "cert-expiry", Runner: "3", Source: "--ignore"}, IgnoreNotEvaluated, 0, 3, ExitWarning, `no runner "3" was diagnosed`},
		{"expired", Ignore{Check: "cert-expiry", Expires: "2026-11-01", ExpiresAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}, IgnoreExpired, 0, 3, ExitWarning, "expired 2026-11-01"},
		{"expires at this instant", Ignore{Check: "cert-expiry", Expires: "x", ExpiresAt: now}, IgnoreExpired, 0, 3, ExitWarning, "expired"},
		{"not expired yet", Ignore{Check: "cert-expiry", Expires: "2026-12-01", ExpiresAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}, IgnoreMatched, 3, 0, ExitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.ig.Reason = "because"
			rep := ignoreWorld(tc.ig)
			ig := rep.Ignores[0]
			if ig.Status != tc.status || ig.Matched != tc.matched || !strings.Contains(ig.Note, tc.noteSays) {
				t.Errorf("status %s, matched %d, note %q; want %s, %d, a note saying %q", ig.Status, ig.Matched, ig.Note, tc.status, tc.matched, tc.noteSays)
			}
			if len(rep.Findings) != tc.left {
				t.Errorf("%d findings left, want %d", len(rep.Findings), tc.left)
			}
			if rep.Summary.ExitCode != tc.exit {
				t.Errorf("exit %d, want %d", rep.Summary.ExitCode, tc.exit)
			}
		})
	}
}

// An expired ignore is a warning: on a run that is otherwise clean it
// makes the exit code 1, and the summary says why.
func TestExpiredIgnoreRaisesTheExitCode(t *testing.T) {
	w := newWorld().check("a", nil)
	clean := w.build(Ignore{Check: "a", Reason: "r"})
	if clean.Summary.ExitCode != ExitOK {
		t.Fatalf("clean run exits %d", clean.Summary.ExitCode)
	}
	rep := w.build(Ignore{Check: "a", Reason: "r", Expires: "2026-01-01", ExpiresAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if rep.Summary.ExitCode != ExitWarning || rep.Summary.ExpiredIgnores != 1 {
		t.Errorf("exit %d, expiredIgnores %d; want 1, 1", rep.Summary.ExitCode, rep.Summary.ExpiredIgnores)
	}
	out := render(t, rep, "table", Options{})
	for _, want := range []string{"1 expired ignore. Exit 1.", "!! ignore a", "expired 2026-01-01"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	crit := newWorld().check("a", nil).find("a", checks.Critical).
		build(Ignore{Check: "b", Reason: "r", Expires: "2026-01-01", ExpiresAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if crit.Summary.ExitCode != ExitError {
		t.Errorf("an expired ignore lowered exit 2 to %d", crit.Summary.ExitCode)
	}
}
