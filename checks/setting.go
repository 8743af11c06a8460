package checks

import "github.com/socialwebcomputer/doctor/internal/hostio"

// Setting is a value the operator may give the nodes that read it (a
// resolver to ask, an image to run), declared on each node that reads it
// (Check.Settings, Fact.Settings): the CLI makes every setting of the
// catalog a flag of its name with Usage as its help, so a setting is
// written once. Validate rejects two settings of one name.
type Setting struct {
	Name string // the flag's name, kebab-case: "public-dns"
	// Default is Value when none is given; "" when no value is a choice
	// of its own (the node then decides, as dns-server's does).
	Default string
	// Usage is the flag's help text; its back-quoted word names the value
	// (`HOST:PORT`), as pflag reads it.
	Usage string
	// Env, when set, is a variable of doctor's own environment that gives
	// the value when the flag does not (CI_REPOSITORY_URL in a job).
	Env string
}

// Value is the setting's value in env: the one given, else Default.
func (s *Setting) Value(env *hostio.Env) string { return env.Setting(s.Name, s.Default) }

// Settings lists the settings the catalog's nodes declare, each once, in
// the order a walk of the catalog meets them (each check's requirements
// before the check).
func Settings(catalog []*Check) []*Setting {
	cat := catalogOf(catalog)
	var out []*Setting
	seen := map[Node]bool{}
	have := map[*Setting]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, r := range n.requirements() {
			r, _ = cat.unwrap(r)
			walk(r)
		}
		for _, s := range n.declared() {
			if !have[s] {
				have[s] = true
				out = append(out, s)
			}
		}
	}
	for _, c := range catalog {
		walk(c)
	}
	return out
}
