package symptom

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func mustCompile(t testing.TB, text string) *Pattern {
	t.Helper()
	p, err := Compile("a-check", text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPatternMatchesFragmentsInOrderAnywhereInTheLine(t *testing.T) {
	for _, tc := range []struct {
		pattern, line string
		want          bool
	}{
		{"timed out waiting for pod to start", "ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending)", true},
		{`namespaces "*" not found`, `setting up build pod: namespaces "gitlab-runner" not found`, true},
		{`namespaces "*" not found`, `namespaces "gitlab-runner" were found, "x" not found`, true}, // * spans any run
		{`namespaces "*" not found`, `not found: namespaces "gitlab-runner"`, false},               // order matters
		{"Checking for jobs... forbidden", "checking for jobs... forbidden", false},                // case-sensitive
		{"0/* nodes are available: *Insufficient ", "0/3 nodes are available: 3 Insufficient cpu.", true},
		{"0/* nodes are available: *Insufficient ", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.", false},
		{"a*a*a*b", "aaab", true},
		{"a*a*a*b", "aab", false},
		{"abcd*abcd", "abcdabcd", true},
		{"abcd*abcd", "abcd", false}, // fragments do not overlap
	} {
		if got := mustCompile(t, tc.pattern).Match(tc.line); got != tc.want {
			t.Errorf("%q on %q: %v, want %v", tc.pattern, tc.line, got, tc.want)
		}
	}
}

// A line built to make a backtracking matcher explode (many partial
// matches of many fragments) is matched in one pass.
func TestPatternMatchIsLinear(t *testing.T) {
	p := mustCompile(t, strings.Repeat("aaaa*", 40)+"b")
	line := strings.Repeat("a", MaxLine)
	start := time.Now()
	for i := 0; i < 100; i++ {
		if p.Match(line) {
			t.Fatal("matched a line without b")
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("100 matches of a %d-byte line took %s", MaxLine, d)
	}
}

// reference is the same language as a Go regexp: QuoteMeta of each
// fragment, `.*` between them, unanchored. RE2 is linear too, so the
// fuzzer can compare the two on any input.
func reference(pattern string) *regexp.Regexp {
	var parts []string
	for _, f := range strings.Split(pattern, "*") {
		parts = append(parts, regexp.QuoteMeta(f))
	}
	return regexp.MustCompile("(?s)" + strings.Join(parts, ".*"))
}

// FuzzMatch checks Match against the regexp that means the same, and
// that Clean and Redact never grow a line without bound or panic.
func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"timed out waiting for pod to start", "prepare environment: timed out waiting for pod to start (last phase: Pending)"},
		{`namespaces "*" not found`, "\x1b[31;1mERROR: Job failed: namespaces \"ci\" not found\x1b[0;m"},
		{"a*a*a*b", "aaab"},
		{"Checking for jobs... forbidden", "\x1b[0Ksection_start:1764590400:step_script\r\x1b[0KChecking for jobs... forbidden\r"},
		{"0/* nodes are available: *Insufficient ", "\t0/1 nodes are available: 1 Insufficient cpu."},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, line string) {
		p, err := Compile("fuzz", pattern)
		if err != nil {
			return // refused patterns never reach a matcher
		}
		// RE2 reads an invalid byte of the line as U+FFFD; Match compares
		// bytes. The two agree except on a pattern that spells U+FFFD.
		if strings.ContainsRune(pattern, '\uFFFD') {
			return
		}
		if got, want := p.Match(line), reference(pattern).MatchString(line); got != want {
			t.Fatalf("Match(%q, %q) = %v, the regexp says %v", pattern, line, got, want)
		}
		clean := Clean(line)
		if len(clean) > len(line) {
			t.Fatalf("Clean grew %q to %q", line, clean)
		}
		if strings.ContainsAny(clean, "\r") {
			t.Fatalf("Clean left a carriage return in %q", clean)
		}
		_ = Redact(clean)
	})
}
