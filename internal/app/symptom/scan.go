package symptom

import (
	"bufio"
	"bytes"
	"errors"
	"io"

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

// New compiles every pattern of the catalog.
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
	}
	return m, errors.Join(errs...)
}

// Line names the checks whose patterns match a cleaned line, in catalog
// order, each once.
func (m *Matcher) Line(line string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range m.patterns {
		if !seen[p.Check] && p.Match(line) {
			seen[p.Check] = true
			out = append(out, p.Check)
		}
	}
	if len(out) > 1 {
		sortByOrder(out, m.order)
	}
	return out
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
	ids := m.Line(clean)
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
	s.Matches = append(s.Matches, Match{Line: s.Lines, Text: Redact(clean), Checks: ids})
}
