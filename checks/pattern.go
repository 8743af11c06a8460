package checks

import (
	"fmt"
	"strings"
)

// MinPatternLiteral is how many non-space characters the fixed parts of a
// Doc.Patterns entry must hold together: fewer would match nearly every
// line of a log.
const MinPatternLiteral = 4

// PatternParts splits a Doc.Patterns entry at its wildcards into the fixed
// fragments a line must contain, in order. It refuses a pattern that spans
// lines or is (nearly) all wildcard; Validate applies it to every check.
func PatternParts(pattern string) ([]string, error) {
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
