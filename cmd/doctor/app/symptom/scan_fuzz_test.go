package symptom_test

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
)

// plantedToken is a runner token in a symptom line: doctor why prints the
// line, never the token.
const plantedToken = "glrt-whySECRETq1w2e3r4t5y6"

// FuzzScan runs doctor why's matcher, built from the real catalog, over an
// arbitrary log followed by one symptom line of the catalog with a token
// in its variable part. No panic; every line is counted; every matched line
// is kept or counted as omitted, in order, cleaned; the symptom line names
// its check; the token is never printed; and a line names a check exactly
// when that check's pattern matches it alone.
func FuzzScan(f *testing.F) {
	for _, seeds := range capturedLines(f) {
		for _, s := range seeds {
			f.Add(s)
		}
	}
	f.Add("")
	f.Add("\r\n\r\n\x1b[0Ksection_start:1764590400:step_script\r\x1b[0K\n")
	f.Add("fatal: unable to access 'https://gitlab-ci-token:" + plantedToken + "@gitlab.example.invalid/g/p.git/'")
	catalog := all.Checks()
	m, err := symptom.New(catalog)
	if err != nil {
		f.Fatal(err)
	}
	// The planted line: the first catalog pattern with a wildcard, the
	// token in its place.
	var plantedCheck, plantedLine string
	for _, c := range catalog {
		for _, p := range c.Doc.Patterns {
			if plantedCheck == "" && strings.Contains(p, "*") {
				plantedCheck, plantedLine = c.ID, strings.Replace(p, "*", " "+plantedToken+" ", 1)
			}
		}
	}
	if plantedCheck == "" {
		f.Fatal("no catalog pattern has a wildcard")
	}
	f.Fuzz(func(t *testing.T, log string) {
		in := log + "\n" + plantedLine + "\n"
		// A log the fuzzer wrote may carry the token's body with no glrt-
		// prefix and no URL around it: bare, it is any job's text, which no
		// redactor can tell from a secret (the exec-upgrade fuzzer found the
		// same case), so the never-printed property holds for the token in
		// a form a redactor knows.
		bareSecretInLog := strings.Contains(strings.ReplaceAll(log, plantedToken, ""), "whySECRET")
		s, err := m.Scan("fuzz.log", strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(in, "\n"), "\n")
		if s.Lines != len(lines) || s.Truncated {
			t.Fatalf("%d lines counted of %d", s.Lines, len(lines))
		}
		if s.Counts[plantedCheck] == 0 {
			t.Fatalf("the symptom line %q did not name %s", plantedLine, plantedCheck)
		}
		if len(s.Matches) > symptom.MaxMatches+len(catalog) {
			t.Fatalf("%d matches kept", len(s.Matches))
		}
		prev := 0
		for _, x := range s.Matches {
			if x.Line <= prev || x.Line > s.Lines || len(x.Checks) == 0 {
				t.Fatalf("match %+v after line %d of %d", x, prev, s.Lines)
			}
			prev = x.Line
			if strings.Contains(x.Text, "\r") || strings.Contains(x.Text, "whySECRET") && !bareSecretInLog {
				t.Fatalf("printed line %q", x.Text)
			}
		}
		for _, id := range s.Checks {
			if s.Counts[id] == 0 {
				t.Fatalf("%s listed, counted 0", id)
			}
		}
		if len(s.Matches)+s.Omitted > s.Lines {
			t.Fatalf("%d kept and %d omitted of %d lines", len(s.Matches), s.Omitted, s.Lines)
		}
		// Scan joins a line to the one before it when the shape says a
		// paste wrapped one message (wrap.go); where no line has that
		// shape, the oracle is the matcher line by line, as a reader
		// would apply each pattern to each cleaned line.
		for i := 1; i < len(lines); i++ {
			if mayContinue(symptom.Clean(lines[i-1]), symptom.Clean(lines[i])) {
				return
			}
		}
		matched, want := 0, map[string]int{}
		for _, l := range lines {
			if len(l) >= symptom.MaxLine {
				return // cut lines are matched on their first MaxLine bytes
			}
			ids := m.Line(symptom.Clean(l))
			if len(ids) > 0 {
				matched++
			}
			for _, id := range ids {
				want[id]++
			}
		}
		if matched != len(s.Matches)+s.Omitted {
			t.Fatalf("%d lines match, %d kept and %d omitted", matched, len(s.Matches), s.Omitted)
		}
		if len(want) != len(s.Checks) {
			t.Fatalf("checks %v, counts %v", s.Checks, want)
		}
		for id, n := range want {
			if s.Counts[id] != n {
				t.Fatalf("%s named by %d lines, counted %d", id, n, s.Counts[id])
			}
		}
	})
}

// mayContinue is a loose bound on wrap.go's continues: a line that starts
// indented, in lower case or with a quote or bracket, after a line that
// ends with a colon or a comma, or either with a table border.
func mayContinue(prev, cur string) bool {
	t := strings.TrimSpace(cur)
	if t == "" || strings.TrimSpace(prev) == "" {
		return false
	}
	if strings.ContainsAny(prev+cur, "│┃|") || len(t) != len(cur) {
		return true
	}
	p := strings.TrimRight(prev, " \t")
	if strings.HasSuffix(p, ":") || strings.HasSuffix(p, ",") {
		return true
	}
	c := t[0]
	return c >= 'a' && c <= 'z' || strings.ContainsRune(`"'([`, rune(c))
}
