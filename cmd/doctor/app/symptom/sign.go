package symptom

import (
	"slices"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
)

// Sign is one compiled checks.Sign of a check.
type Sign struct {
	check string
	s     checks.Sign
	core  *Pattern // nil: no core
}

// CompileSign compiles a check's sign.
func CompileSign(check string, s checks.Sign) (*Sign, error) {
	c := &Sign{check: check, s: s}
	if s.Core != "" {
		p, err := Compile(check, s.Core)
		if err != nil {
			return nil, err
		}
		c.core = p
	}
	return c, nil
}

// may says whether the line may show the sign, cheaply, before it is
// parsed: its core's longest fragment is in it, or a word of one of the
// causes it needs, or kubectl's words for a kubectl sign.
func (g *Sign) may(line string, hints *lineHints) bool {
	if g.core != nil && !strings.Contains(line, g.core.parts[g.core.longest]) {
		return false
	}
	if g.s.Kubectl && !hints.kubectl(line) {
		return false
	}
	if len(g.s.Causes) > 0 && !slices.ContainsFunc(g.s.Causes, func(k string) bool { return hints.cause(line, k) }) {
		return false
	}
	return true
}

// lineHints remembers, for one line, which cause classes' words it holds
// and whether kubectl's: read in one pass over the line, whatever the
// number of signs.
type lineHints struct {
	read      bool
	classes   map[string]bool
	isKubectl bool
}

func (h *lineHints) cause(line, k string) bool {
	h.scan(line)
	return h.classes[k]
}

func (h *lineHints) kubectl(line string) bool {
	h.scan(line)
	return h.isKubectl
}

func (h *lineHints) scan(line string) {
	if h.read {
		return
	}
	h.read = true
	for i := 0; i+1 < len(line); i++ {
		key := uint16(line[i])<<8 | uint16(line[i+1])
		if hintStarts[key>>6]&(1<<(key&63)) == 0 {
			continue
		}
		for _, w := range hintWords[key] {
			if strings.HasPrefix(line[i:], w.word) {
				if w.kubectl {
					h.isKubectl = true
					continue
				}
				if h.classes == nil {
					h.classes = map[string]bool{}
				}
				h.classes[w.class] = true
			}
		}
	}
}

// hintWord is a word of a cause class (or of kubectl's wordings), indexed
// by its first two bytes: one pass over a line finds every class whose
// words it holds.
type hintWord struct {
	word    string
	class   string
	kubectl bool
}

var hintWords, hintStarts = func() (map[uint16][]hintWord, [1024]uint64) {
	words := map[uint16][]hintWord{}
	var starts [1024]uint64
	add := func(w hintWord) {
		key := uint16(w.word[0])<<8 | uint16(w.word[1])
		words[key] = append(words[key], w)
		starts[key>>6] |= 1 << (key & 63)
	}
	for _, k := range checks.SignCauses {
		for _, w := range causeHints(k) {
			add(hintWord{word: w, class: k})
		}
	}
	for _, w := range kubectlWords {
		add(hintWord{word: w, kubectl: true})
	}
	return words, starts
}()

// Match says whether a cleaned line shows the sign, read as its check's
// alone (a kubectl line matches a Kubectl sign).
func (g *Sign) Match(line string) bool {
	p := Parse(line)
	return g.match(line, &p)
}

// match says whether the line, read as p, shows the sign.
func (g *Sign) match(line string, p *Parts) bool {
	_, _, ok := g.matchSpan(line, p)
	return ok
}

// matchSpan is match, and the span of its core (the whole line without
// one).
func (g *Sign) matchSpan(line string, p *Parts) (start, end int, ok bool) {
	s := g.s
	switch {
	case s.Kubectl != p.Kubectl, s.Clock && !p.Clock, containsAny(line, s.Unless),
		len(s.Endpoints) > 0 && !slices.Contains(s.Endpoints, p.Endpoint),
		len(s.Causes) > 0 && !slices.ContainsFunc(s.Causes, func(c string) bool { return slices.Contains(p.Causes, c) }):
		return 0, 0, false
	}
	start, end = 0, len(line)
	rest := line
	if g.core != nil {
		if start, end, ok = g.core.span(line); !ok {
			return 0, 0, false
		}
		rest = line[end:]
	}
	if len(s.Reason) > 0 && !slices.ContainsFunc(s.Reason, func(r string) bool {
		return strings.Contains(rest, r) || slices.Contains(p.Reasons, r)
	}) {
		return 0, 0, false
	}
	return start, end, true
}

// kubectlNote is the cause every check a kubectl line names shares: the
// line says nothing of whose kubeconfig kubectl used.
const kubectlNote = checks.NotACheck + "kubectl's own kubeconfig (a job's script, or your shell), not the runner's"

const kubectlTell = "kubectl printed this line with the kubeconfig of whoever ran it: run it as the runner's user with the runner's KUBECONFIG " +
	"(sudo -u gitlab-runner env KUBECONFIG=… kubectl …) to know whether the runner's own credential fails"
