package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// TestDocsLinksResolve keeps the README and docs/ one document: every
// relative link of README.md and docs/*.md names a file that exists and,
// with #anchor, a heading or <a id> of that file, as GitHub renders it.
// docs/runner-source-notes.md is left out: it quotes the runner's own docs,
// links and all.
func TestDocsLinksResolve(t *testing.T) {
	docs, err := filepath.Glob("../../../docs/*.md")
	cmdtest.NoErr(t, err)
	files := []string{"../../../README.md"}
	for _, d := range docs {
		if filepath.Base(d) != "runner-source-notes.md" {
			files = append(files, d)
		}
	}
	if len(files) < 5 {
		t.Fatalf("README.md and docs/: %v", files)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchorsOf := map[string]map[string]bool{}
	anchors := func(path string) map[string]bool {
		if a, ok := anchorsOf[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		cmdtest.NoErr(t, err)
		a := markdownAnchors(string(b))
		anchorsOf[path] = a
		return a
	}
	links := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		cmdtest.NoErr(t, err)
		for _, m := range link.FindAllStringSubmatch(outsideFences(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			resolved := f
			if path != "" {
				resolved = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s links %s: %v", f, target, err)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchors(resolved)[anchor] {
				t.Errorf("%s links %s: %s has no heading or <a id> %q", f, target, resolved, anchor)
			}
		}
	}
	if links < 20 {
		t.Fatalf("found %d relative links in README.md and docs/: the pattern reads no link", links)
	}
}

// markdownAnchors are the anchors GitHub gives a markdown file: each
// heading's text lowercased, every character but letters, marks, digits,
// '-', connector punctuation ('_') and spaces dropped, spaces made '-', a repeat suffixed -1, -2, …;
// and every <a id="…">.
func markdownAnchors(s string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	heading := regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	for _, m := range heading.FindAllStringSubmatch(outsideFences(s), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r) || unicode.Is(unicode.Pc, r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	for _, m := range regexp.MustCompile(`<a id="([^"]+)"></a>`).FindAllStringSubmatch(s, -1) {
		out[m[1]] = true
	}
	return out
}

// outsideFences is s with the lines of fenced code blocks blanked: a
// "# 1. cert-expiry" line of an output is no heading, and a "](" in one
// is no link.
func outsideFences(s string) string {
	lines := strings.Split(s, "\n")
	fence := ""
	for i, l := range lines {
		switch {
		case fence == "" && (strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~~")):
			fence = l[:3]
			lines[i] = ""
		case fence != "" && strings.HasPrefix(l, fence):
			fence = ""
			lines[i] = ""
		case fence != "":
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
