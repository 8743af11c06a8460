package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/text/safetext/safetexttest"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// Untrusted text, end to end (issue 20): a host whose every input that
// reaches a finding carries terminal escapes, a newline before a quick
// action or a mention, table pipes and HTML, run in every output format,
// with a job log, an ignore and an override of the same and a textfile;
// its bundle analyzed; a state file's remembered title under
// --changes-only.

// hostile is what each value carries: an OSC that retitles the window and
// one that makes a link, a screen clear, a carriage return that rewrites
// the line, a newline and a quick action, a newline and a mention, a pipe
// that would end a table cell, HTML, a link, a bidi override, a C1 CSI.
const hostile = "\x1b]0;pwned\x07\x1b]8;;http://evil.invalid\x07click\x1b]8;;\x07\x1b[2J\rforged\n/close\n@all | <script>x</script> [l](http://evil.invalid) \u202eabc \u009b31m z\u200bw\u200dj\u2060\ufeff\u00ad #1 ~bug %m $5 &6 :smile: [[_TOC_]] www.evil.invalid me@evil.invalid deadbeef1 ABC-123"

// tomlString is s as a TOML basic string (\uXXXX for every control).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f:
			b.WriteString(`\u00` + "0123456789abcdef"[r>>4:r>>4+1] + "0123456789abcdef"[r&0xf:r&0xf+1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String() + `"`
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// hostileHost is a runner whose name, namespace, unknown keys, kubeconfig
// path and host name carry hostile text, and whose log says so too.
func hostileHost(t *testing.T) (root, log string) {
	r := testroot.New(t)
	kubeconfig := "/etc/gitlab-runner/kube" + hostile + ".yaml"
	r.Runner(4242, 0, map[string]string{"KUBECONFIG": kubeconfig, "PATH": "/usr/bin"})
	r.Write("/etc/hostname", "runner-1"+hostile+"\n", 0o644)
	config := "concurrent = 2\n\n[[runners]]\n  name = " + tomlString("evil "+hostile) + "\n" +
		"  url = \"https://gitlab.example.invalid/\"\n  token = \"glrt-not-a-real-token-0000\"\n  executor = \"kubernetes\"\n" +
		"  " + tomlString("unknown"+hostile) + " = 1\n" +
		"  [runners.kubernetes]\n    namespace = " + tomlString("ns"+hostile) + "\n" +
		"    " + tomlString("key|<b>"+hostile) + " = 2\n" +
		"\n[[runners]]\n  name = " + tomlString("\u202eevil\u2066") + "\n" +
		"  url = \"https://gitlab.example.invalid/\"\n  token = \"glrt-not-a-real-token-0001\"\n  executor = \"kubernetes\"\n"
	r.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	// A line the runner prints (cluster-override's symptom), with what a
	// job's output can put on the same line: colours are removed as the
	// log is read, the rest is the line.
	line := "ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth"
	log = writeLog(t, "Running with gitlab-runner 19.3.0\n"+line+" \x07\x1b!\x1bX \u009b2J \u202eevil @all | <b>x</b>\n"+
		line+" `@all` \x00\x08\x7f\n")
	return r.Dir, log
}

// ownMarkdownHTML is the raw HTML the report writes itself.
var ownMarkdownHTML = regexp.MustCompile(`^(<details><summary>(Passed|Skipped): [0-9]+</summary>|</details>)\n?$`)

func TestUntrustedTextIsEscapedInEveryOutput(t *testing.T) {
	root, log := hostileHost(t)
	dir := t.TempDir()
	textfile, bundle, stateFile := filepath.Join(dir, "doctor.prom"), filepath.Join(dir, "ticket.tar.gz"), filepath.Join(dir, "state.json")
	// A state file remembers a finding whose title is the outside's: the
	// run proves it gone, and --changes-only prints it as resolved.
	noErr(t, os.WriteFile(stateFile, []byte(`{"version": 1, "findings": {"ffffffffffff": {"check": "runner-process", "runner": null,
		"severity": "error", "title": `+jsonString(hostile)+`, "firstSeen": "2026-11-28T12:00:00Z", "lastSeen": "2026-11-28T12:00:00Z"}}}`), 0o600))
	base := []string{"--root", root, "--offline", "--now", whyNow, "--verbose", "--log", log,
		"--ignore", "config-lint:*:accepted" + hostile, "--namespace", "override" + hostile}
	outs := map[string]string{}
	for _, format := range []string{"table", "wide", "json", "yaml", "markdown"} {
		args := append([]string{"run", "-o", format}, base...)
		if format == "json" {
			args = append(args, "--textfile", textfile, "--bundle", bundle)
		}
		_, out, stderr := runDoctor(args...)
		if out == "" {
			t.Fatalf("-o %s printed nothing; stderr: %s", format, stderr)
		}
		outs["-o "+format] = out
		outs["-o "+format+" stderr"] = stderr
	}
	_, outs["why"], outs["why stderr"] = runDoctor("why", log, "--root", root, "--offline", "--now", whyNow)
	_, outs["why -o markdown"], outs["why -o markdown stderr"] = runDoctor("why", log, "--root", root, "--offline", "--now", whyNow, "-o", "markdown")
	b, err := os.ReadFile(textfile)
	noErr(t, err)
	outs["textfile"] = string(b)
	// doctor analyze prints the bundle manifest's host, flags and version.
	for _, format := range []string{"table", "markdown"} {
		name := "analyze -o " + format
		_, outs[name], outs[name+" stderr"] = runDoctor("analyze", bundle, "-o", format)
		name = "--changes-only -o " + format
		_, outs[name], outs[name+" stderr"] = runDoctor(append([]string{"run", "-o", format, "--state", stateFile, "--changes-only"}, base...)...)
	}

	// The routes are taken: the hostile text reached the report, as data.
	rep := decodeReport(t, outs["-o json"])
	routes := map[string]bool{}
	for _, f := range rep.Findings {
		if strings.Contains(f.Cause, "/close") || strings.Contains(f.Cause, `\n/close`) {
			routes[f.Check] = true
		}
	}
	for _, id := range []string{"config-unknown-keys", "kubeconfig-file"} {
		if !routes[id] {
			t.Errorf("no %s finding quotes the hostile text: the route is not taken (findings %v)", id, routes)
		}
	}
	if len(rep.Matches) != 2 || !strings.Contains(rep.Host, "\x1b") || len(rep.Ignores) != 1 || len(rep.Overrides) != 1 {
		t.Errorf("the log lines, the host name, the ignore and the override are not all in the report: %d matches, host %q, %d ignores, %d overrides",
			len(rep.Matches), rep.Host, len(rep.Ignores), len(rep.Overrides))
	}
	var y map[string]any
	noErr(t, yaml.Unmarshal([]byte(outs["-o yaml"]), &y))
	var j map[string]any
	noErr(t, json.Unmarshal([]byte(outs["-o json"]), &j))

	for name, out := range outs {
		keep := "\n\t"
		if name == "-o json" || name == "-o yaml" || name == "textfile" {
			keep = "\n"
		}
		if p := safetexttest.Terminal(out, keep); p != "" {
			t.Errorf("%s: %s", name, p)
		}
	}
	// doctor why's markdown links each check it names to its README
	// section, its own link.
	ownLink := regexp.MustCompile(`^a Link: "(` + strings.Join(checkIDs(), "|") + `)"$`)
	for _, name := range []string{"-o markdown", "why -o markdown", "analyze -o markdown", "--changes-only -o markdown"} {
		_, problems := safetexttest.Markdown([]byte(outs[name]), ownMarkdownHTML.MatchString)
		for _, p := range problems {
			if name != "why -o markdown" || !ownLink.MatchString(p) {
				t.Errorf("%s: %s", name, p)
			}
		}
		if t.Failed() {
			t.Logf("%s:\n%s", name, outs[name])
		}
	}
	// What was escaped is still shown: a reader sees the value had an ESC
	// and a newline.
	q := regexp.QuoteMeta
	for name, want := range map[string]string{"-o table": q(`\x1b]0;pwned\x07`), "-o wide": q(`\x1b]0;pwned\x07`),
		"-o markdown": q("`") + `[^` + "`" + `]*` + q(`\x1b]0;pwned\x07`), "why": q(`\x07\x1b! \u009b2J \u202eevil`), "why -o markdown": q(`\x07\x1b! \u009b2J \u202eevil`),
		"analyze -o markdown":     q("| Host | `runner-1\\x1b]0;pwned\\x07"),
		"--changes-only -o table": `Resolved since \S+:\s+` + q(`\x1b]0;pwned\x07`)} {
		if !regexp.MustCompile(want).MatchString(outs[name]) {
			t.Errorf("%s does not show the escaped value %s:\n%s", name, want, outs[name])
		}
	}
	if code, _, _ := runDoctor(append([]string{"run", "-o", "table"}, base...)...); code == report.ExitCantRun {
		t.Errorf("the hostile host is a run that could not run (exit 3)")
	}
}

// TestErrorsQuoteWhatTheyWereGivenEscaped: a message on stderr that
// quotes a path, a flag's value or a file's content shows its control
// characters escaped.
func TestErrorsQuoteWhatTheyWereGivenEscaped(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"why", filepath.Join(dir, "job"+hostile+".log")},
		{"run", "--root", filepath.Join(dir, "root"+hostile)},
		{"analyze", filepath.Join(dir, "bundle"+hostile+".tar.gz")},
		{"run", "--state", writeLog(t, "{\"version\": \""+hostile+"\"")},
		{"run", "--config-file", writeLog(t, "ignores:\n  - check: \"x\\e]0;pwned\\a\"\n    reason: r\n")},
		{"run", "--bogus" + hostile},
		{"explain", "runner" + hostile},
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
	logf(2, "GET %s: %s", "https://x.invalid/"+hostile, hostile)
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
