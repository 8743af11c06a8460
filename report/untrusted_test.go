package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/safetext/safetexttest"
)

// Untrusted text: every renderer escapes every field. A report holding each
// part a renderer prints (root and folded findings with evidence and
// fixes, checks of every status, ignores of every status, overrides,
// cleanup errors, a bundle, logs) has every text field set from the fuzzer's
// strings, by reflection, so a field added later is covered without a
// change here; what is rendered must hold no character safetext escapes
// and, in markdown, nothing GitLab would act on.

// hostileSeeds are the inputs of issue 20: terminal escapes, quick actions
// and mentions after a newline, table pipes, HTML, links, fences, bidi.
var hostileSeeds = [][3]string{
	{"runner", "plain text", "sudo systemctl restart gitlab-runner"},
	{"r\x1b]0;pwned\x07", "\x1b[2J\x1b[Hcleared\rover", "kubectl apply -f -\n/close\n@all"},
	{"ns\n/close", "\n/label ~x\n@all mention", "```\n/assign @me\n```"},
	{"a|b\\|c", "cell | break \\| here <script>alert(1)</script>", "\t@group\n/close"},
	{"@all", "[link](http://evil.invalid) ![img](x) <http://auto.invalid>", "~~~\n/close"},
	{"\u202eevil\u2066", "bidi \u202e override \u2069 and c1 \u009b31m", "\x1b[31mred\x1b[0m"},
	{"\xff\xfe", "# heading\n- item\n1. item\n> quote\n---\n", "$$\n/close\n$$"},
	{"", "`unpaired <b>", "````\n/close"},
	{"x_@all", "mail user@example.invalid image@sha256:abc then _@all_ and *@all*", "ok"},
	{"`@all`", "&#64;all &lt;b&gt; \\@all", "<details>"},
	{"/close", "/close", "/close"},
	{"@all", "@all hello", "@all"},
	{"@", "why @", "@"},
	{"    indented", "    indented\n```\nfence", "1. one\n- two"},
	// Issue 29: what GitLab forms of text (autolinks, references across
	// projects, labels, milestones, snippets, a table of contents, emoji,
	// commits, a tracker's issue key), alone and touching code spans.
	{"group/project#3", "see https://evil.invalid/x www.evil.invalid mail me@evil.invalid #1 !1 group/project#3 other/proj!4 ~bug ~\"two words\" %v1 %\"m 2\" $5 &6 [[_TOC_]] [TOC] :smile: :+1: deadbeef1 ABC-123 *iteration:7 ^alert#8 [vulnerability:9]", "ok"},
	{"`x`#1", "`code`#2 ~`label` `a`:smile: #3`b` www.`x`.invalid ``` `` ` #4", "ok"},
	// Issue 29: every format character, invisible ones included.
	{"git\u200blab\u00ad", "zero\u200bwidth\u200c\u200d join\u2060 bom\ufeff shy\u00ad tag\U000e0041 arabic\u0600", "fix\u200b\ufeff"},
}

func hostileReport(name, text, fix string) *Report {
	r1 := func() *checks.RunnerRef { return &checks.RunnerRef{Index: 1, Name: "kcp"} }
	r0 := func() *checks.RunnerRef { return &checks.RunnerRef{Index: 0, Name: "--kubeconfig"} }
	by := "cert-expiry"
	rep := &Report{
		SchemaVersion: SchemaVersion, Doctor: DoctorInfo{Version: "1.2.3"}, Host: "host", Args: []string{"--offline", "--root"},
		Bundle:    &BundleInfo{File: "ticket.tar.gz", Doctor: "1.2.2"},
		StartedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Runners:   []Runner{{Index: 1, Name: "kcp", Executor: "kubernetes"}},
		Findings: []Finding{
			{Rank: 1, Check: "cert-expiry", Runner: r1(), Severity: checks.Critical, Title: "t", Cause: "cause",
				Evidence: []checks.Evidence{{Source: "src", Detail: "detail"}, {Source: "src2", Detail: "detail2"}},
				Fix:      "fix", FixSteps: checks.Steps{checks.Say("fix"), checks.Sh("fix")}, Docs: "README.md#cert-expiry", Explains: []string{"api-auth"}, Fingerprint: "aaaaaaaaaaaa", Change: "new"},
			{Rank: 2, Check: "api-auth", Runner: r1(), Severity: checks.Error, Title: "t", Cause: "cause", CausedBy: &by,
				Evidence: []checks.Evidence{{Source: "src", Detail: "detail"}}, Fix: "fix", FixSteps: checks.Steps{checks.Say("fix"), checks.Sh("fix")}, Fingerprint: "bbbbbbbbbbbb", depth: 1},
			{Rank: 3, Check: "namespace", Runner: r0(), Severity: checks.Warning, Title: "t", Cause: "cause", Fix: "fix", FixSteps: checks.Steps{checks.Say("fix"), checks.Sh("fix")}, Fingerprint: "cccccccccccc"},
			{Rank: 4, Check: "runner-process", Severity: checks.Info, Title: "t", Cause: "cause", Fingerprint: "dddddddddddd"},
		},
		Checks: []CheckStatus{
			{ID: "runner-process", Status: checks.StatusPass, Reason: "r"},
			{ID: "cert-expiry", Runner: r1(), Status: checks.StatusFail},
			{ID: "gitlab-reachability", Status: checks.StatusSkipped, Reason: "offline"},
			{ID: "namespace", Runner: r1(), Status: checks.StatusUnknown, Reason: "timeout"},
		},
		Ignores: []Ignore{
			{Check: "a", Runner: "1", Fingerprint: "eeeeeeeeeeee", Reason: "r", Source: "--ignore", Matched: 1, Status: IgnoreMatched},
			{Check: "b", Reason: "r", Expires: "2026-01-01", Source: ".doctor.yaml", Status: IgnoreExpired, Note: "n"},
			{Check: "c", Reason: "r", Source: ".doctor.yaml", Status: IgnoreNotEvaluated, Note: "n"},
			{Check: "d", Reason: "r", Source: ".doctor.yaml", Status: IgnoreMatchedNothing, Note: "n"},
		},
		Overrides:     []Override{{Flag: "--namespace", Value: "ns", Replaces: "the namespace"}},
		CleanupErrors: []string{"pod x"},
		Logs:          []LogRead{{Source: "job.log", Lines: 3}},
		Matches:       []Match{{Source: "job.log", LineNumber: 1, Line: "line", Check: "image-pull", OneOf: []string{"image-pull", "not a doctor check: "}, Tell: "tell"}},
		Job: &Job{ID: 42, Project: "g/p", Name: "rspec", Stage: "test", Status: "failed", FailureReason: "runner_system_failure", WebURL: "https://x/g/p/-/jobs/42",
			Runner: &JobRunner{ID: 7, Description: "d", SystemID: "s_1", ManagerVersion: "19.3.0"}, Entry: r1(), How: "how"},
		Summary: Summary{Critical: 1, Error: 1, Warning: 1, Info: 1, Incomplete: []string{"why"}, ExitCode: 2},
		Verbose: true,
		Rerun:   []string{"doctor", "run", "--root", "/x"},
	}
	fill(reflect.ValueOf(rep).Elem(), "", name, text, fix, map[uintptr]bool{})
	return rep
}

// fill sets every settable string under v: a fix to fix, names and sources
// (what a value from outside is alone in) to name, causes, reasons and
// details to text, and the rest to what they were with text appended.
// Statuses keep theirs, so every part is rendered.
func fill(v reflect.Value, field, name, text, fix string, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		fill(v.Elem(), field, name, text, fix, seen)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), v.Type().Field(i).Name, name, text, fix, seen)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), field, name, text, fix, seen)
		}
	case reflect.String:
		switch field {
		case "Status", "Kind":
		case "Fix", "Text":
			v.SetString(fix)
		case "Name", "Host", "Source", "File", "Value", "Flag", "Runner":
			v.SetString(name)
		case "Cause", "Reason", "Detail":
			v.SetString(text)
		default:
			v.SetString(v.String() + text)
		}
	}
}

// TestFillReachesEveryField: every text field of the report's type (but
// the statuses) holds the fuzzer's text somewhere in hostileReport, so the
// fuzzers below cover each one, a field added later included.
func TestFillReachesEveryField(t *testing.T) {
	rep := hostileReport("\x01", "\x01", "\x01")
	reached := map[string]bool{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if f := v.Type().Field(i); f.IsExported() {
					walk(v.Field(i), path+"."+f.Name)
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), path)
			}
		case reflect.String:
			reached[path] = reached[path] || strings.Contains(v.String(), "\x01")
		}
	}
	walk(reflect.ValueOf(rep).Elem(), "Report")
	var fields func(ty reflect.Type, path string)
	fields = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice:
			fields(ty.Elem(), path)
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				if f := ty.Field(i); f.IsExported() && f.Name != "Status" && f.Name != "Kind" {
					fields(f.Type, path+"."+f.Name)
				}
			}
		case reflect.String:
			if !reached[path] {
				t.Errorf("%s holds no text of the fuzzer's", path)
			}
		}
	}
	fields(reflect.TypeOf(Report{}), "Report")
}

// TestYAMLOfOrdinaryTextIsUnchanged: -o yaml, now written through
// safetext.YAML, is what yaml.Marshal wrote of a report of ordinary text.
func TestYAMLOfOrdinaryTextIsUnchanged(t *testing.T) {
	rep := hostileReport("kcp-tenant", " with text: a/b \"quoted\" 'x' #1 [y] <z> & ünïcode …\nand a line", "sudo systemctl restart x\n\tindented")
	want, err := yaml.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := RenderWith(&got, rep, "yaml", Options{}); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("-o yaml changed:\n--- got\n%s\n--- yaml.Marshal\n%s", got.String(), want)
	}
}

// renderedColour is the one escape sequence the table writes itself, a
// severity's colour and its reset.
var renderedColour = regexp.MustCompile(`\x1b\[[0-9;]+m`)

// FuzzTable: table and wide output, at a table's width and a stacked
// block's, with and without colour, and json and yaml, hold no character
// safetext escapes (newlines and a fix's tabs aside); with colour, the only
// escapes are the severities' colours, two per finding.
func FuzzTable(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, name, text, fix string) {
		rep := hostileReport(name, text, fix)
		for _, format := range []string{"table", "wide"} {
			// Rows with colour on a wide terminal, blocks without on a
			// narrow one.
			for _, opt := range []Options{{Colour: true, UTF8: true, Width: 200}, {Width: 80}} {
				var b bytes.Buffer
				if err := RenderWith(&b, rep, format, opt); err != nil {
					t.Fatal(err)
				}
				out := b.String()
				if opt.Colour {
					if n, want := strings.Count(out, "\x1b"), 2*len(rep.Findings); n != want {
						t.Fatalf("-o %s with colour: %d escapes, want %d (the severities'):\n%s", format, n, want, out)
					}
					out = renderedColour.ReplaceAllString(out, "")
				}
				if p := safetexttest.Terminal(out, "\n\t"); p != "" {
					t.Fatalf("-o %s at %d columns: %s\n%s", format, opt.Width, p, out)
				}
			}
		}
		var js, ym bytes.Buffer
		if err := RenderWith(&js, rep, "json", Options{}); err != nil {
			t.Fatal(err)
		}
		if p := safetexttest.Terminal(js.String(), "\n"); p != "" {
			t.Fatalf("-o json: %s", p)
		}
		var back Report
		if err := json.Unmarshal(js.Bytes(), &back); err != nil {
			t.Fatalf("-o json does not parse: %v", err)
		}
		if err := RenderWith(&ym, rep, "yaml", Options{}); err != nil {
			t.Fatalf("-o yaml: %v", err)
		}
		if p := safetexttest.Terminal(ym.String(), "\n"); p != "" {
			t.Fatalf("-o yaml: %s\n%s", p, ym.String())
		}
		var any map[string]any
		if err := yaml.Unmarshal(ym.Bytes(), &any); err != nil {
			t.Fatalf("-o yaml does not parse: %v", err)
		}
	})
}

// ownHTML is the raw HTML the markdown report writes itself.
var ownHTML = regexp.MustCompile(`^(<details><summary>(Passed|Skipped): [0-9]+</summary>|</details>)\n?$`)

// FuzzMarkdown: parsed as GitLab would, the markdown report has nothing of
// what safetexttest.Markdown looks for (a quick action or a mention, raw
// HTML but its own <details>, a link, a broken table row, a character
// safetext escapes), and its structure is the report's: one h2, an h3 per
// finding and one for the checks that could not check, a blockquote per
// incomplete reason and override, a fix and a verify block per root cause
// with a fix, and a row per finding in the findings table.
func FuzzMarkdown(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, name, text, fix string) {
		rep := hostileReport(name, text, fix)
		var b bytes.Buffer
		if err := RenderWith(&b, rep, "markdown", Options{}); err != nil {
			t.Fatal(err)
		}
		md := b.Bytes()
		doc, problems := safetexttest.Markdown(md, ownHTML.MatchString)
		for _, p := range problems {
			t.Errorf("%s", p)
		}
		fixes := 0
		for _, f := range rep.Findings {
			if f.CausedBy == nil && len(f.FixSteps) > 0 {
				fixes++
			}
		}
		for _, c := range []struct {
			what      string
			got, want int
		}{
			{"h2", safetexttest.Headings(doc, 2), 1},
			{"h3", safetexttest.Headings(doc, 3), len(rep.Findings) + 1},
			{"blockquotes", safetexttest.Count(doc, ast.KindBlockquote), len(rep.Summary.Incomplete) + len(rep.Overrides)},
			{"code blocks", safetexttest.Count(doc, ast.KindFencedCodeBlock), 2 * fixes},
			{"indented code blocks", safetexttest.Count(doc, ast.KindCodeBlock), 0},
			{"tables", safetexttest.Count(doc, extast.KindTable), 4},
			{"table rows", safetexttest.Count(doc, extast.KindTableRow), 8 + len(rep.Findings) + 1 + 1},
			{"list items", safetexttest.Count(doc, ast.KindListItem), 3 + 1},
		} {
			if c.got != c.want {
				t.Errorf("%d %s, want %d", c.got, c.what, c.want)
			}
		}
		if t.Failed() {
			t.Logf("the markdown:\n%s", md)
		}
	})
}
