// Package symptom finds the lines of a job log or a runner log that a
// check documents as its symptom (checks.Doc.Patterns), for doctor why and
// doctor run --log.
package symptom

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
)

// Pattern is one compiled Doc.Patterns entry: the fixed fragments between
// its wildcards, in order.
type Pattern struct {
	Check string // the check whose symptom it is
	Text  string // as written in the check's Doc
	// Or and Tell are a checks.Ambiguous entry's: the line's other causes
	// and what tells them apart. Without Or the line is Check's alone.
	Or    []string
	Tell  string
	parts []string
	// longest is the index of the longest part: a line without it cannot
	// match, which rules most lines out with a single search.
	longest int
}

// Compile splits a pattern at its wildcards (checks.PatternParts).
func Compile(check, text string) (*Pattern, error) {
	parts, err := checks.PatternParts(text)
	if err != nil {
		return nil, fmt.Errorf("check %q: %w", check, err)
	}
	p := &Pattern{Check: check, Text: text, parts: parts}
	for i, part := range parts {
		if len(part) > len(parts[p.longest]) {
			p.longest = i
		}
	}
	return p, nil
}

// Match says whether line contains the pattern: its fragments in order,
// each found after the previous one. A pattern is implicitly surrounded by
// wildcards, so taking each fragment at its leftmost place after the last
// is a match whenever any placement is (the leftmost end leaves the most
// room for what follows): no backtracking, one pass over the line.
func (p *Pattern) Match(line string) bool {
	_, ok := p.MatchEnd(line)
	return ok
}

// MatchEnd is Match, and where in line the match ends: what follows is
// the reason a Sign reads after its core.
func (p *Pattern) MatchEnd(line string) (int, bool) {
	_, end, ok := p.span(line)
	return end, ok
}

// span is where in line the match starts and ends.
func (p *Pattern) span(line string) (start, end int, ok bool) {
	if !strings.Contains(line, p.parts[p.longest]) {
		return 0, 0, false
	}
	for i, part := range p.parts {
		j := strings.Index(line[end:], part)
		if j < 0 {
			return 0, 0, false
		}
		if i == 0 {
			start = end + j
		}
		end += j + len(part)
	}
	return start, end, true
}
