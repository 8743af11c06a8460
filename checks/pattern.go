package checks

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MinPatternLiteral is how many non-space characters the fixed parts of a
// Doc.Patterns entry must hold together: fewer would match nearly every
// line of a log.
const MinPatternLiteral = 4

// PatternParts splits a Doc.Patterns entry at its wildcards into the fixed
// fragments a line must contain, in order. It refuses a pattern that spans
// lines, is not UTF-8 or is (nearly) all wildcard; Validate applies it to every check.
func PatternParts(pattern string) ([]string, error) {
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("pattern %q is not UTF-8", pattern)
	}
	if strings.ContainsAny(pattern, "\n\r") {
		return nil, fmt.Errorf("pattern %q spans more than one line", pattern)
	}
	var parts []string
	literal := 0
	for _, part := range strings.Split(pattern, "*") {
		if part == "" {
			continue
		}
		literal += len(strings.Join(strings.Fields(part), ""))
		parts = append(parts, part)
	}
	if literal < MinPatternLiteral {
		return nil, fmt.Errorf("pattern %q is (nearly) all wildcard: its fixed parts need %d characters", pattern, MinPatternLiteral)
	}
	return parts, nil
}
