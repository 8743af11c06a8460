package symptom

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/socialwebcomputer/doctor/checks"
)

// Bounds on what one log may cost. A GitLab job log is at most the
// runner's output_limit (4096 KB by default, 51200 KB as the guide sets
// it), so MaxInput holds any whole job log; a runner's journal is read
// from its end by the caller.
const (
	MaxLine    = 64 << 10 // a longer line is cut here before matching
	MaxInput   = 64 << 20 // bytes read from one log
	MaxMatches = 100      // matched lines kept, beyond the first of each check
)

// Matcher matches lines against every pattern of a catalog.
type Matcher struct {
	patterns []*Pattern
	signs    []*Sign
	order    map[string]int // check ID -> catalog position
}

// New compiles every pattern of the catalog, its Ambiguous ones included.
func New(catalog []*checks.Check) (*Matcher, error) {
	m := &Matcher{order: map[string]int{}}
	var errs []error
	for i, c := range catalog {
		m.order[c.ID] = i
		for _, text := range c.Doc.Patterns {
			p, err := Compile(c.ID, text)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			m.patterns = append(m.patterns, p)
		}
		for _, a := range c.Doc.Ambiguous {
			p, err := Compile(c.ID, a.Pattern)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p.Or, p.Tell = a.Or, a.Tell
			m.patterns = append(m.patterns, p)
		}
		for _, sg := range c.Doc.Signs {
			g, err := CompileSign(c.ID, sg)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			m.signs = append(m.signs, g)
		}
	}
	return m, errors.Join(errs...)
}

// OneOf is an ambiguous verdict: the line has one of several causes.
type OneOf struct {
	Causes []string // check IDs in catalog order, then checks.NotACheck causes
	Tell   string   // what tells them apart
}

// Verdict is what one cleaned line says.
type Verdict struct {
	// Checks are every check the line names, in catalog order, each once:
	// those it is the symptom of, and every check among the causes of an
	// ambiguous verdict (they run to decide).
	Checks []string
	// OneOf are its ambiguous verdicts: a shared symptom no more specific
	// pattern decided (a pattern of one of its causes matching too decides
	// for that cause).
	OneOf []OneOf
}

// Line names the checks whose patterns match a cleaned line, in catalog
// order, each once (Verdict's Checks).
func (m *Matcher) Line(line string) []string {
	return m.Verdict(line).Checks
}

// Verdict matches a cleaned line against every pattern, and its parts
// (Parse, read only when a sign may match) against every sign.
func (m *Matcher) Verdict(line string) Verdict {
	return m.verdict(line)
}

// shared is one ambiguous match: its causes, what tells them apart, and
// where on the line its words start.
type shared struct {
	causes []string
	tell   string
	start  int
	// sign: the match is a Sign's, about the line's reason: only a
	// definite match whose words reach it decides it.
	sign bool
}

func (m *Matcher) verdict(line string) Verdict {
	var v Verdict
	var parts *Parts
	read := func() *Parts {
		if parts == nil {
			p := Parse(line)
			parts = &p
		}
		return parts
	}
	// definite holds, of each check named for sure, how far into the
	// line its words reach: a check decides an ambiguous sign among whose
	// causes it is only when its words reach the sign's (a wrapper's
	// "Checking for jobs... failed" decides nothing of the x509 reason
	// after it); an ambiguous pattern, any of its causes decides.
	definite := map[string]int{}
	reach := func(id string, end int) {
		if e, ok := definite[id]; !ok || end > e {
			definite[id] = end
		}
	}
	var amb []shared
	for _, p := range m.patterns {
		start, end, ok := p.span(line)
		if !ok {
			continue
		}
		if len(p.Or) > 0 {
			amb = append(amb, shared{causes: append([]string{p.Check}, p.Or...), tell: p.Tell, start: start})
			continue
		}
		reach(p.Check, end)
	}
	var fallbacks []string
	var hints lineHints
	for _, g := range m.signs {
		if !g.may(line, &hints) {
			continue
		}
		start, end, ok := g.matchSpan(line, read())
		if !ok {
			continue
		}
		switch {
		case g.s.Fallback:
			fallbacks = append(fallbacks, g.check)
		case len(g.s.Or) > 0:
			amb = append(amb, shared{causes: append([]string{g.check}, g.s.Or...), tell: g.s.Tell, start: start, sign: true})
		default:
			reach(g.check, end)
		}
	}
	// A fallback is its check's only when nothing else explains the
	// line: the reason after its core is another check's.
	for _, c := range fallbacks {
		if len(definite) == 0 && len(amb) == 0 {
			definite[c] = len(line)
		}
	}
	kubectl := parts != nil && parts.Kubectl
	if kubectl && len(definite) > 0 {
		// kubectl's own words say nothing of whose kubeconfig it used:
		// every check they point at is one cause among the operator's or
		// the job's own kubectl.
		var ids []string
		for id := range definite {
			ids = append(ids, id)
		}
		sortByOrder(ids, m.order)
		amb = append(amb, shared{causes: append(ids, kubectlNote), tell: kubectlTell})
		definite = map[string]int{}
	}
	named := map[string]bool{}
	for id := range definite {
		v.Checks = append(v.Checks, id)
		named[id] = true
	}
	for _, a := range amb {
		causes := a.causes
		if kubectl && !slices.Contains(causes, kubectlNote) {
			causes = append(slices.Clone(causes), kubectlNote)
		}
		if slices.ContainsFunc(causes, func(c string) bool { e, ok := definite[c]; return ok && (!a.sign || e > a.start) }) {
			continue // decided by a more specific pattern
		}
		one := OneOf{Causes: m.causeOrder(causes), Tell: a.tell}
		if slices.ContainsFunc(v.OneOf, func(o OneOf) bool { return slices.Equal(o.Causes, one.Causes) }) {
			continue // the same causes, from another of their patterns
		}
		v.OneOf = append(v.OneOf, one)
		for _, c := range causes {
			if _, isCheck := m.order[c]; isCheck && !named[c] {
				named[c] = true
				v.Checks = append(v.Checks, c)
			}
		}
	}
	if len(v.Checks) > 1 {
		sortByOrder(v.Checks, m.order)
	}
	return v
}

// causeOrder is causes with the checks first, in catalog order, then the
// causes no check probes, as written.
func (m *Matcher) causeOrder(causes []string) []string {
	var ids, others []string
	for _, c := range causes {
		if _, ok := m.order[c]; ok {
			ids = append(ids, c)
		} else {
			others = append(others, c)
		}
	}
	sortByOrder(ids, m.order)
	return append(ids, others...)
}

func sortByOrder(ids []string, order map[string]int) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && order[ids[j]] < order[ids[j-1]]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

// Match is one line that names checks.
type Match struct {
	Line   int      // from 1
	Text   string   // cleaned and redacted
	Checks []string // catalog order
	OneOf  []OneOf  // its ambiguous verdicts, if any
}

// Scan is what one log held.
type Scan struct {
	Source  string
	Lines   int
	Matches []Match
	// Checks are every check some line named, in catalog order, with how
	// many lines named each (Matches keeps only the first MaxMatches).
	Checks []string
	Counts map[string]int
	// Omitted counts matched lines not kept in Matches.
	Omitted int
	// LongLines counts lines cut at MaxLine; Truncated says the log went on
	// past MaxInput and the rest was not read.
	LongLines int
	Truncated bool
}

// Scan reads r line by line, at most MaxInput bytes and MaxLine of each
// line, and matches every line. Only a read error is an error.
func (m *Matcher) Scan(source string, r io.Reader) (*Scan, error) {
	s := &Scan{Source: source, Counts: map[string]int{}}
	limited := &io.LimitedReader{R: r, N: MaxInput}
	br := bufio.NewReaderSize(limited, MaxLine)
	kept := map[string]bool{}
	var pend *pending
	flush := func() {
		if pend != nil {
			m.record(s, kept, pend.line, pend.text, pend.v)
			pend = nil
		}
	}
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		cut := false
		if errors.Is(err, bufio.ErrBufferFull) {
			// Keep the line's first MaxLine bytes; skip to its end.
			line = append(line[:0], chunk...)
			cut = true
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else {
			line = append(line[:0], chunk...)
		}
		if err != nil && err != io.EOF {
			return s, err
		}
		if len(line) > 0 {
			s.Lines++
			if cut {
				s.LongLines++
			}
			clean := Clean(string(bytes.TrimRight(line, "\n")))
			text := rowText(clean)
			alone := m.Verdict(text)
			// A message wrapped over several lines or table rows is
			// matched whole: the line continues the one before it when
			// its shape says so and the two together tell more than
			// either alone (wrap.go).
			if next, ok := m.join(pend, clean, alone); ok {
				pend = next
			} else {
				flush()
				pend = &pending{line: s.Lines, last: clean, text: text, v: alone}
			}
		}
		if err == io.EOF {
			break
		}
	}
	flush()
	if limited.N == 0 {
		var one [1]byte
		if n, _ := r.Read(one[:]); n > 0 {
			s.Truncated = true
		}
	}
	for id := range s.Counts {
		s.Checks = append(s.Checks, id)
	}
	sortByOrder(s.Checks, m.order)
	return s, nil
}

func (m *Matcher) record(s *Scan, kept map[string]bool, at int, clean string, v Verdict) {
	ids := v.Checks
	if len(ids) == 0 {
		return
	}
	fresh := false
	for _, id := range ids {
		s.Counts[id]++
		if !kept[id] {
			fresh = true
		}
	}
	// The first line of each check is always kept, so no check goes
	// unexplained however often another one repeats.
	if len(s.Matches) >= MaxMatches && !fresh {
		s.Omitted++
		return
	}
	for _, id := range ids {
		kept[id] = true
	}
	s.Matches = append(s.Matches, Match{Line: at, Text: Redact(clean), Checks: ids, OneOf: v.OneOf})
}
