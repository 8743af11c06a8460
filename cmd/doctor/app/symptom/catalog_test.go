package symptom_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
)

// capturedLines are symptom lines as the runner, client-go or the runner's
// docs print them, for every check of the catalog, read from each check's
// own testdata/<id>.symptoms: each of a check's patterns must match one of
// its lines. A check registered without its file fails the test, so every
// new check brings the lines its patterns are for, in its own package.
func capturedLines(t testing.TB) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("../../../../checks/*/testdata/*.symptoms")
	if err != nil || len(files) == 0 {
		t.Fatalf("no checks/*/testdata/*.symptoms: %v", err)
	}
	out := map[string][]string{}
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".symptoms")
		lines, err := symptomFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = lines
	}
	return out
}

// symptomFile reads a .symptoms file: a Go string literal a line (so a
// line keeps its escape codes), blank lines and # comments between.
func symptomFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		s, err := strconv.Unquote(l)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not a Go string literal: %v", path, i+1, err)
		}
		lines = append(lines, s)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: no line", path)
	}
	return lines, nil
}

func matcher(t *testing.T) *symptom.Matcher {
	t.Helper()
	m, err := symptom.New(all.Checks())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEveryPatternMatchesALineItWasQuotedFrom(t *testing.T) {
	m := matcher(t)
	captured := capturedLines(t)
	for _, c := range all.Checks() {
		lines, ok := captured[c.ID]
		if !ok {
			t.Errorf("%s: no captured symptom line: add the lines its patterns quote to its package's testdata/%s.symptoms", c.ID, c.ID)
			continue
		}
		texts := slices.Clone(c.Doc.Patterns)
		for _, a := range c.Doc.Ambiguous {
			texts = append(texts, a.Pattern)
		}
		for _, text := range texts {
			p, err := symptom.Compile(c.ID, text)
			if err != nil {
				t.Fatal(err)
			}
			hit := false
			for _, l := range lines {
				hit = hit || p.Match(symptom.Clean(l))
			}
			if !hit {
				t.Errorf("%s: pattern %q matches none of its captured lines", c.ID, text)
			}
		}
		for _, sg := range c.Doc.Signs {
			g, err := symptom.CompileSign(c.ID, sg)
			if err != nil {
				t.Fatal(err)
			}
			hit := false
			for _, l := range lines {
				hit = hit || g.Match(symptom.Clean(l))
			}
			if !hit {
				t.Errorf("%s: sign %s matches none of its captured lines", c.ID, sg)
			}
		}
		for _, l := range lines {
			if !slices.Contains(m.Line(symptom.Clean(l)), c.ID) {
				t.Errorf("%s: its captured line %q does not name it", c.ID, l)
			}
		}
	}
}

// Healthy logs name no check: a pattern that matches a job that worked
// would send every reader of a good log after a cause.
func TestHealthyLogsMatchNothing(t *testing.T) {
	m := matcher(t)
	for _, path := range []string{"../../../../testdata/logs/healthy-kubernetes-job.log", "../../../../testdata/logs/healthy-runner-journal.log"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.Scan(path, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s.Lines < 15 {
			t.Fatalf("%s: only %d lines", path, s.Lines)
		}
		for _, x := range s.Matches {
			t.Errorf("%s:%d names %v: %q", path, x.Line, x.Checks, x.Text)
		}
	}
}
