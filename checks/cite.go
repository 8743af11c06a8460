package checks

import (
	"slices"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// citer is a fact that declares evidence (Fact.Cites).
type citer interface {
	cites(v any) []Evidence
}

func (f *Fact[T]) cites(v any) []Evidence {
	if f.Cites == nil || v == nil {
		return nil
	}
	t, ok := v.(T)
	if !ok {
		return nil
	}
	return f.Cites(t)
}

// cite appends to every finding of check c the evidence its facts declare
// (Fact.Cites), those it requires directly and those they require in turn,
// so that no check has to remember to: an API check's every finding names
// the cluster it read and why that one. Other checks are not walked
// through (their facts are theirs), nor gates. Evidence a finding already
// carries is not repeated.
func cite(s *scope, c *Check, findings []Finding) []Finding {
	if len(findings) == 0 {
		return findings
	}
	var evs []Evidence
	seen := map[Node]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		for _, req := range n.requirements() {
			if isGate(req) {
				continue
			}
			req, _ = s.cat.unwrap(req)
			if _, isCheck := req.(*Check); isCheck || seen[req] {
				continue
			}
			seen[req] = true
			walk(req)
			ct, ok := req.(citer)
			if !ok {
				continue
			}
			rr := s.lookup(req)
			if rr == nil {
				continue // below a given fact: never scheduled
			}
			<-rr.done
			if rr.err != nil {
				continue
			}
			for _, e := range ct.cites(rr.value) {
				e = Evidence{Source: redact.Text(e.Source), Detail: redact.Text(e.Detail)}
				if !slices.Contains(evs, e) {
					evs = append(evs, e)
				}
			}
		}
	}
	walk(c)
	if len(evs) == 0 {
		return findings
	}
	for i := range findings {
		for _, e := range evs {
			if !slices.Contains(findings[i].Evidence, e) {
				findings[i].Evidence = append(findings[i].Evidence, e)
			}
		}
	}
	return findings
}
