package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/socialwebcomputer/doctor/checks"
)

// The markdown report is for a GitLab issue: rendered by a CommonMark
// renderer (goldmark, with GitLab's tables), it has one heading per finding
// titled by the finding, every fix and verify command in a code block, no
// link that would be dead in a ticket, and the passed and skipped checks
// in collapsed <details>.
func TestMarkdownRendersAsAGitLabIssue(t *testing.T) {
	r1 := &checks.RunnerRef{Index: 1, Name: "kcp-tenant"}
	by := "cert-expiry"
	rep := &Report{
		Doctor: DoctorInfo{Version: "1.2.3"}, Host: "runner-1.example.invalid", Args: []string{"--offline"},
		StartedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Runners:   []Runner{{Index: 1, Name: "kcp-tenant", Executor: "kubernetes"}},
		Findings: []Finding{
			{Rank: 1, Check: "cert-expiry", Runner: r1, Severity: checks.Critical, Title: "The kubeconfig's client certificate is valid now",
				Cause:    `[[runners]] #1 "kcp-tenant": the client certificate (CN=did:plc:x) expired at 11:00Z, 1h0m ago: every job fails`,
				Evidence: []checks.Evidence{{Source: "client-certificate-data", Detail: "ECDSA P-256 <not shown>"}},
				Fix:      "sudo install -m 0600 new.yaml /etc/gitlab-runner/kubeconfig.yaml\n# then `restart`", Fingerprint: "aaaaaaaaaaaa",
				FixSteps: checks.Steps{checks.Say("Install the new kubeconfig:"), checks.Sh("sudo install -m 0600 new.yaml /etc/gitlab-runner/kubeconfig.yaml\n# then `restart`")}},
			{Rank: 2, Check: "api-auth", Runner: r1, Severity: checks.Error, Title: "The API accepts the credential",
				Cause: "The front answers 401 Unauthorized to the runner's certificate.", CausedBy: &by, Fingerprint: "bbbbbbbbbbbb"},
		},
		Checks: []CheckStatus{
			{ID: "runner-process", Status: checks.StatusPass},
			{ID: "cert-expiry", Runner: r1, Status: checks.StatusFail},
			{ID: "gitlab-reachability", Status: checks.StatusSkipped, Reason: "offline"},
			{ID: "namespace", Runner: r1, Status: checks.StatusUnknown, Reason: "GET namespaces: timeout"},
		},
		Summary: Summary{Critical: 1, Error: 1, Ran: 3, Checks: 4, Pass: 1, Fail: 1, Unknown: 1, Skipped: 1, ExitCode: 2},
		Rerun:   []string{"doctor", "run", "--offline"},
	}
	var md bytes.Buffer
	if err := RenderWith(&md, rep, "markdown", Options{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := gm.Convert(md.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	h := out.String()
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(h, -1)) }
	if n := count(`<h2>doctor: 1 critical, 1 error on runner-1\.example\.invalid</h2>`); n != 1 {
		t.Errorf("want one h2 headline naming the host:\n%s", h)
	}
	for _, want := range []string{
		"<h3>1. The client certificate (<code>CN=did:plc:x</code>) expired at <code>11:00Z</code>, 1h0m ago</h3>",
		`<h3>2. The front answers 401 Unauthorized to the runner's certificate</h3>`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("no finding heading %s:\n%s", want, h)
		}
	}
	if count(`<h3>`) != 3 { // two findings and "Could not check"
		t.Errorf("want 3 h3 sections, got %d:\n%s", count(`<h3>`), h)
	}
	// The root cause's fix and verify command are code blocks; the folded
	// finding has none of its own.
	if n := count(`<pre><code class="language-sh">`); n != 2 {
		t.Errorf("want 2 code blocks (fix, verify), got %d:\n%s", n, h)
	}
	if !strings.Contains(h, "# then `restart`") {
		t.Errorf("the fix's own backticks must survive inside the fence:\n%s", h)
	}
	if count(`<code>doctor explain (cert-expiry|api-auth)</code>`) != 2 {
		t.Errorf("each finding names `doctor explain ID`:\n%s", h)
	}
	if strings.Contains(h, "README.md") || count(`<a href`) != 0 {
		t.Errorf("a ticket has no relative links:\n%s", h)
	}
	if count(`<details><summary>Passed: 1</summary>`) != 1 || count(`<details><summary>Skipped: 1</summary>`) != 1 {
		t.Errorf("passed and skipped checks go in <details>:\n%s", h)
	}
	if !strings.Contains(h, "<td><code>runner-process</code></td>") {
		t.Errorf("the passed table renders as a table inside <details>:\n%s", h)
	}
	// The runner label's brackets are code, not a link reference, and its
	// #1 is no reference to issue 1.
	if !strings.Contains(h, `<code>[[runners]]</code> <code>#1</code> &quot;kcp-tenant&quot;`) {
		t.Errorf("the runner label reads as text:\n%s", h)
	}
	if !strings.Contains(h, "<table>") || !strings.Contains(h, "<td>Host</td>") {
		t.Errorf("the header is a table:\n%s", h)
	}
}

// A title starts with a capital, unless its first word is a URL, a path,
// a file or a key, which a capital would misspell.
func TestFindingTitleKeepsVerbatimWords(t *testing.T) {
	for cause, want := range map[string]string{
		"https://127.0.0.1:6443 answers 401 Unauthorized to a certificate within its dates": "https://127.0.0.1:6443 answers 401 Unauthorized to a certificate within its dates",
		"config.toml has mode 0644 and holds a runner token":                                "config.toml has mode 0644 and holds a runner token",
		"/etc/gitlab-runner/config.toml has mode 0644":                                      "/etc/gitlab-runner/config.toml has mode 0644",
		"the client certificate expired":                                                    "The client certificate expired",
	} {
		if got := FindingTitle(Finding{Cause: cause}); got != want {
			t.Errorf("FindingTitle(%q) = %q, want %q", cause, got, want)
		}
	}
}
