package symptom

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
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

// Verdict matches a cleaned line against every pattern.
func (m *Matcher) Verdict(line string) Verdict {
	var v Verdict
	definite := map[string]bool{}
	var shared []*Pattern
	for _, p := range m.patterns {
		if len(p.Or) == 0 && definite[p.Check] || !p.Match(line) {
			continue
		}
		if len(p.Or) > 0 {
			shared = append(shared, p)
			continue
		}
		definite[p.Check] = true
		v.Checks = append(v.Checks, p.Check)
	}
	named := maps.Clone(definite)
	for _, p := range shared {
		causes := append([]string{p.Check}, p.Or...)
		if slices.ContainsFunc(causes, func(c string) bool { return definite[c] }) {
			continue // decided by a more specific pattern
		}
		v.OneOf = append(v.OneOf, OneOf{Causes: m.causeOrder(causes), Tell: p.Tell})
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
			m.record(s, kept, string(bytes.TrimRight(line, "\n")))
		}
		if err == io.EOF {
			break
		}
	}
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

func (m *Matcher) record(s *Scan, kept map[string]bool, raw string) {
	clean := Clean(raw)
	v := m.Verdict(clean)
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
	s.Matches = append(s.Matches, Match{Line: s.Lines, Text: Redact(clean), Checks: ids, OneOf: v.OneOf})
}
