package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/text/safetext/safetexttest"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// Untrusted text, end to end (issue 20): a host whose every input that
// reaches a finding carries terminal escapes, a newline before a quick
// action or a mention, table pipes and HTML, run in every output format,
// with a job log, an ignore and an override of the same and a textfile;
// its bundle analyzed; a state file's remembered title under
// --changes-only.

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
	kubeconfig := "/etc/gitlab-runner/kube" + cmdtest.Hostile + ".yaml"
	r.Runner(4242, 0, map[string]string{"KUBECONFIG": kubeconfig, "PATH": "/usr/bin"})
	r.Write("/etc/hostname", "runner-1"+cmdtest.Hostile+"\n", 0o644)
	config := "concurrent = 2\n\n[[runners]]\n  name = " + tomlString("evil "+cmdtest.Hostile) + "\n" +
		"  url = \"https://gitlab.example.invalid/\"\n  token = \"glrt-not-a-real-token-0000\"\n  executor = \"kubernetes\"\n" +
		"  " + tomlString("unknown"+cmdtest.Hostile) + " = 1\n" +
		"  [runners.kubernetes]\n    namespace = " + tomlString("ns"+cmdtest.Hostile) + "\n" +
		"    " + tomlString("key|<b>"+cmdtest.Hostile) + " = 2\n" +
		"\n[[runners]]\n  name = " + tomlString("\u202eevil\u2066") + "\n" +
		"  url = \"https://gitlab.example.invalid/\"\n  token = \"glrt-not-a-real-token-0001\"\n  executor = \"kubernetes\"\n"
	r.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	// A line the runner prints (cluster-override's symptom), with what a
	// job's output can put on the same line: colours are removed as the
	// log is read, the rest is the line.
	line := "ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth"
	log = cmdtest.WriteLog(t, "Running with gitlab-runner 19.3.0\n"+line+" \x07\x1b!\x1bX \u009b2J \u202eevil @all | <b>x</b>\n"+
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
	cmdtest.NoErr(t, os.WriteFile(stateFile, []byte(`{"version": 1, "findings": {"ffffffffffff": {"check": "runner-process", "runner": null,
		"severity": "error", "title": `+jsonString(cmdtest.Hostile)+`, "firstSeen": "2026-11-28T12:00:00Z", "lastSeen": "2026-11-28T12:00:00Z"}}}`), 0o600))
	base := []string{"--root", root, "--offline", "--now", whyNow, "--verbose", "--log", log,
		"--ignore", "config-lint:*:accepted" + cmdtest.Hostile, "--namespace", "override" + cmdtest.Hostile}
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
	cmdtest.NoErr(t, err)
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
	cmdtest.NoErr(t, yaml.Unmarshal([]byte(outs["-o yaml"]), &y))
	var j map[string]any
	cmdtest.NoErr(t, json.Unmarshal([]byte(outs["-o json"]), &j))

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
	var ids []string
	for _, c := range all.Checks() {
		ids = append(ids, c.ID)
	}
	ownLink := regexp.MustCompile(`^a Link: "(` + strings.Join(ids, "|") + `)"$`)
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
