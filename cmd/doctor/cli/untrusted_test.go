package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/text/safetext/safetexttest"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// What the command line prints of untrusted text itself: its error
// messages, -v's log lines, its catalog, and doctor why's matches. A whole
// run of a hostile host, in every output, is cmd/doctor/e2e's
// TestUntrustedTextIsEscapedInEveryOutput.

// TestErrorsQuoteWhatTheyWereGivenEscaped: a message on stderr that
// quotes a path, a flag's value or a file's content shows its control
// characters escaped.
func TestErrorsQuoteWhatTheyWereGivenEscaped(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"why", filepath.Join(dir, "job"+cmdtest.Hostile+".log")},
		{"run", "--root", filepath.Join(dir, "root"+cmdtest.Hostile)},
		{"analyze", filepath.Join(dir, "bundle"+cmdtest.Hostile+".tar.gz")},
		{"run", "--state", cmdtest.WriteLog(t, "{\"version\": \""+cmdtest.Hostile+"\"")},
		{"run", "--config-file", cmdtest.WriteLog(t, "ignores:\n  - check: \"x\\e]0;pwned\\a\"\n    reason: r\n")},
		{"run", "--bogus" + cmdtest.Hostile},
		{"explain", "runner" + cmdtest.Hostile},
	} {
		code, out, stderr := runDoctor(args...)
		if code != report.ExitCantRun || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 3 and a message", args, code, stderr)
		}
		for name, s := range map[string]string{"stdout": out, "stderr": stderr} {
			if p := safetexttest.Terminal(s, "\n\t"); p != "" {
				t.Errorf("%q: %s: %s", args, name, p)
			}
		}
	}
}

// TestLogLinesAreEscaped: -v's log lines hold a server's and a file's text.
func TestLogLinesAreEscaped(t *testing.T) {
	var b strings.Builder
	logf := newLogger(&b, 2)
	logf(2, "GET %s: %s", "https://x.invalid/"+cmdtest.Hostile, cmdtest.Hostile)
	if p := safetexttest.Terminal(b.String(), "\n"); p != "" || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("log: %s: %q", p, b.String())
	}
}

// TestCatalogAndExplainAreFit: doctor checks, doctor explain of every
// check and doctor version print no unfit character (their text is
// doctor's own; the test holds them to it).
func TestCatalogAndExplainAreFit(t *testing.T) {
	for _, args := range [][]string{{"checks"}, {"checks", "-o", "wide"}, {"checks", "-o", "json"}, {"checks", "-o", "yaml"}, {"version"}} {
		_, out, _ := runDoctor(args...)
		if p := safetexttest.Terminal(out, "\n"); p != "" {
			t.Errorf("%q: %s", args, p)
		}
	}
	for _, id := range checkIDs() {
		// A Caddyfile block is tab-indented, as caddy fmt writes it.
		_, out, _ := runDoctor("explain", id)
		if p := safetexttest.Terminal(out, "\n\t"); p != "" {
			t.Errorf("explain %s: %s", id, p)
		}
	}
}

// FuzzWhy: what doctor why and --log print of a log before the report (its
// name, each matched line, the checks they name), as text and as markdown,
// holds no unfit character and, in markdown, nothing GitLab would act on,
// whatever the log's name and lines hold.
func FuzzWhy(f *testing.F) {
	for _, s := range [][2]string{
		{"/var/log/job.log", "ERROR: Job failed: getting Kubernetes config"},
		{"job\x1b]0;pwned\x07.log", "line \x07\x1b! \u009b2J \u202eevil @all | <b>x</b>"},
		{"/close", "`@all` \x00\x08\x7f [x](http://evil.invalid)"},
		{"journal gitlab-runner\n@all", "\xff\xfe"},
		{"group/project#3.log", "see www.evil.invalid https://evil.invalid #1 !2 ~bug %m $5 &6 :smile: [[_TOC_]] me@evil.invalid deadbeef1 ABC-123 `x`#7"},
	} {
		f.Add(s[0], s[1])
	}
	ownLink := regexp.MustCompile(`^a Link: "cluster-override"$`)
	f.Fuzz(func(t *testing.T, source, line string) {
		matched := &symptom.Scan{Source: source, Lines: 3, Checks: []string{"cluster-override"}, Omitted: 1, Truncated: true,
			Matches: []symptom.Match{{Line: 2, Text: line, Checks: []string{"cluster-override"}}}}
		unmatched := &symptom.Scan{Source: source, Lines: 3}
		for _, output := range []string{"table", "markdown"} {
			var b strings.Builder
			a := &app{io: IO{Out: &b}}
			for _, why := range []bool{true, false} {
				a.printMatches(&runFlags{why: why, output: output}, []*symptom.Scan{matched, unmatched}, []string{"cluster-override"})
			}
			if _, err := a.noSymptom(&runFlags{why: true, output: output}, []*symptom.Scan{unmatched}, time.Unix(0, 0)); err != nil {
				t.Fatal(err)
			}
			if p := safetexttest.Terminal(b.String(), "\n"); p != "" {
				t.Fatalf("-o %s: %s\n%s", output, p, b.String())
			}
			if output != "markdown" {
				continue
			}
			_, problems := safetexttest.Markdown([]byte(b.String()), nil)
			for _, p := range problems {
				if !ownLink.MatchString(p) {
					t.Errorf("%s", p)
				}
			}
			if t.Failed() {
				t.Fatalf("the markdown:\n%s", b.String())
			}
		}
	})
}
