package checks

import (
	"errors"
	"fmt"
	"strings"
)

// Validate proves the catalog is well formed before anything runs: unique
// IDs, docs present with their symptom patterns, requirements acyclic,
// Explains naming known checks.
func Validate(catalog []*Check) error { return validate(catalog, true, nil) }

// validate is Validate; Run passes complete=false, so a test can run a part
// of the catalog whose Explains name checks left out (the registry's own
// test validates the whole catalog), and the facts it gives (Options.Given),
// below which nothing runs and so nothing needs to resolve.
func validate(catalog []*Check, complete bool, given []Given) error {
	return errors.Join(validateChecks(catalog, complete), validateGraph(catalog, complete, given))
}

// validateChecks proves each check is one a reader can act on: a kebab-case
// ID of its own, its title and doc, a default severity, a Run, and the
// symptom patterns doctor why finds it by.
func validateChecks(catalog []*Check, complete bool) error {
	var errs []error
	checks := map[string]*Check{}
	for _, c := range catalog {
		if !idPattern.MatchString(c.ID) {
			errs = append(errs, fmt.Errorf("check %q: ID is not kebab-case", c.ID))
		}
		if checks[c.ID] != nil {
			errs = append(errs, fmt.Errorf("check %q: duplicate ID", c.ID))
		}
		checks[c.ID] = c
		if c.Title == "" || c.Doc.Cause == "" || c.Doc.Symptom == "" || len(c.Doc.Fix) == 0 || len(c.Doc.Verify) == 0 {
			errs = append(errs, fmt.Errorf("check %q: title and doc (cause, symptom, fix, verify) are required", c.ID))
		}
		if c.Severity < Info || c.Severity > Critical {
			errs = append(errs, fmt.Errorf("check %q: default severity must be info..critical", c.ID))
		}
		if c.Run == nil {
			errs = append(errs, fmt.Errorf("check %q: no Run", c.ID))
		}
		// doctor why finds a check only through its patterns. A test's
		// partial catalog may go without; the registry's may not.
		if len(c.Doc.Patterns) == 0 && len(c.Doc.Ambiguous) == 0 && len(c.Doc.Signs) == 0 && complete {
			errs = append(errs, fmt.Errorf("check %q: doc has no patterns: quote the symptom lines it explains", c.ID))
		}
		for _, pat := range c.Doc.Patterns {
			if _, err := PatternParts(pat); err != nil {
				errs = append(errs, fmt.Errorf("check %q: %w", c.ID, err))
			}
		}
	}
	for _, c := range catalog {
		for _, a := range c.Doc.Ambiguous {
			errs = append(errs, validateAmbiguous(c, a, checks, complete)...)
		}
		for _, s := range c.Doc.Signs {
			errs = append(errs, validateSign(c, s, checks, complete)...)
		}
	}
	return errors.Join(errs...)
}

// validateAmbiguous proves a shared symptom names what doctor why prints
// for it: a pattern, causes besides the check's own (each a check of the
// catalog, or NotACheck and words), and what tells them apart.
func validateAmbiguous(c *Check, a Ambiguous, catalog map[string]*Check, complete bool) []error {
	var errs []error
	if _, err := PatternParts(a.Pattern); err != nil {
		errs = append(errs, fmt.Errorf("check %q: ambiguous %w", c.ID, err))
	}
	if len(a.Or) == 0 || a.Tell == "" {
		errs = append(errs, fmt.Errorf("check %q: ambiguous pattern %q needs its other causes (Or) and what tells them apart (Tell)", c.ID, a.Pattern))
	}
	for _, alt := range a.Or {
		switch {
		case strings.HasPrefix(alt, NotACheck):
			if strings.TrimSpace(strings.TrimPrefix(alt, NotACheck)) == "" {
				errs = append(errs, fmt.Errorf("check %q: ambiguous pattern %q: %q names no cause", c.ID, a.Pattern, alt))
			}
		case alt == c.ID:
			errs = append(errs, fmt.Errorf("check %q: ambiguous pattern %q names the check itself among its other causes", c.ID, a.Pattern))
		case complete && catalog[alt] == nil:
			errs = append(errs, fmt.Errorf("check %q: ambiguous pattern %q: %q is neither a check nor %q and a cause", c.ID, a.Pattern, alt, NotACheck))
		}
	}
	return errs
}

// validateGraph proves the requirements make one DAG: every node reachable
// through Requires is acyclic, a fact's ID is its own, a required check (or
// a Ref) is in the catalog, no two settings share a name, Explains do not
// loop (and, complete, name known checks), and per-runner nodes expand over
// one runner list.
func validateGraph(catalog []*Check, complete bool, given []Given) error {
	var errs []error
	isGiven := map[Node]bool{}
	for _, g := range given {
		isGiven[g.node] = true
	}
	cat := catalogOf(catalog)
	checks := map[string]*Check{}
	for _, c := range catalog {
		checks[c.ID] = c
	}
	facts := map[string]Node{}
	settings := map[string]*Setting{}
	// Walk every node reachable through Requires: collect facts, and find
	// cycles with the usual three colours.
	const (
		white = iota
		grey
		black
	)
	colour := map[Node]int{}
	var walk func(n Node, path []string)
	walk = func(n Node, path []string) {
		switch colour[n] {
		case grey:
			errs = append(errs, fmt.Errorf("requirement cycle: %v -> %s", path, n.NodeID()))
			return
		case black:
			return
		}
		colour[n] = grey
		for _, s := range n.declared() {
			switch prev := settings[s.Name]; {
			case !idPattern.MatchString(s.Name):
				errs = append(errs, fmt.Errorf("%s: setting %q: its name is not kebab-case", n.NodeID(), s.Name))
			case prev != nil && prev != s:
				errs = append(errs, fmt.Errorf("%s: setting %q: two settings share the name", n.NodeID(), s.Name))
			}
			settings[s.Name] = s
		}
		if _, isCheck := n.(*Check); !isCheck {
			if prev, ok := facts[n.NodeID()]; ok && prev != n {
				errs = append(errs, fmt.Errorf("fact %q: two facts share the ID", n.NodeID()))
			}
			facts[n.NodeID()] = n
			if checks[n.NodeID()] != nil {
				errs = append(errs, fmt.Errorf("fact %q: shares its ID with a check", n.NodeID()))
			}
		} else if checks[n.NodeID()] == nil {
			errs = append(errs, fmt.Errorf("%v requires check %q, which is not in the catalog", path, n.NodeID()))
		}
		if isGiven[n] {
			colour[n] = black
			return
		}
		for _, r := range n.requirements() {
			r, _ = cat.unwrap(r)
			if r == nil {
				errs = append(errs, fmt.Errorf("%s: nil requirement", n.NodeID()))
				continue
			}
			if id, ok := r.(ref); ok {
				errs = append(errs, fmt.Errorf("%v requires check %q by its ID, which is not in the catalog", append(path, n.NodeID()), string(id)))
				continue
			}
			walk(r, append(path, n.NodeID()))
		}
		colour[n] = black
	}
	for _, c := range catalog {
		walk(c, nil)
	}
	// Explains must name known checks and must not loop, or no root exists.
	for _, c := range catalog {
		for _, e := range c.Explains {
			if checks[e] == nil && complete {
				errs = append(errs, fmt.Errorf("check %q explains unknown check %q", c.ID, e))
			}
		}
	}
	ecolour := map[string]int{}
	var ewalk func(id string, path []string)
	ewalk = func(id string, path []string) {
		switch ecolour[id] {
		case grey:
			errs = append(errs, fmt.Errorf("explains cycle: %v -> %s", path, id))
			return
		case black:
			return
		}
		ecolour[id] = grey
		if c := checks[id]; c != nil {
			for _, e := range c.Explains {
				ewalk(e, append(path, id))
			}
		}
		ecolour[id] = black
	}
	for _, c := range catalog {
		ewalk(c.ID, nil)
	}
	// Per-runner nodes expand over one runner list.
	var lister Node
	for n := range colour {
		if e, ok := n.(interface{ expandsOver() Node }); ok && e.expandsOver() != nil {
			if lister != nil && lister != e.expandsOver() {
				errs = append(errs, fmt.Errorf("fact %q expands over %q, another fact over %q: one runner list only",
					n.NodeID(), e.expandsOver().NodeID(), lister.NodeID()))
			}
			lister = e.expandsOver()
		}
	}
	return errors.Join(errs...)
}
