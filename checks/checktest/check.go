package checktest

import (
	"context"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// An Option shapes one run of a check under test: where its root is, what
// facts are given, what doctor's flags would have set.
type Option func(*setup)

type setup struct {
	env   hostio.Env
	given []checks.Given
	with  []*checks.Check
	opt   checks.Options
}

// Root runs the check against the host laid out under dir.
func Root(dir string) Option { return func(s *setup) { s.env.Root = dir } }

// Now fixes the clock (--now).
func Now(t time.Time) Option { return func(s *setup) { s.env.Clock = t } }

// Offline skips the network facts and checks (--offline).
func Offline() Option { return func(s *setup) { s.env.Offline = true } }

// Setting gives a setting's value (its flag): Setting("public-dns", "127.0.0.1:53").
func Setting(name, value string) Option {
	return func(s *setup) {
		if s.env.Settings == nil {
			s.env.Settings = map[string]string{}
		}
		s.env.Settings[name] = value
	}
}

// Env changes anything else of the run's hostio.Env (--kubeconfig,
// --context, a tape to replay...).
func Env(change func(*hostio.Env)) Option { return func(s *setup) { change(&s.env) } }

// Fact gives f the value v: f does not compute, nor anything below it, and
// the check judges v. So a check's test states the world the check sees in
// the facts' own types, and needs neither a host nor a cluster for it.
func Fact[T any](f *checks.Fact[T], v T) Option {
	return func(s *setup) { s.given = append(s.given, checks.Give(f, v)) }
}

// With puts a check the check under test requires by checks.Ref (as
// kubefacts.AfterAPIAuth names api-auth) into the run's catalog, where the
// engine resolves the Ref. Checks required by pointer, and those they
// require, are in the catalog without it. They run as the check requires
// them; Check returns the check's own results only.
func With(cs ...*checks.Check) Option { return func(s *setup) { s.with = append(s.with, cs...) } }

// Timeout bounds the whole run (--timeout): every node's deadline is the
// sooner of its own and the run's. Without it, a minute.
func Timeout(d time.Duration) Option { return func(s *setup) { s.opt.Timeout = d } }

// RunnerNamed restricts the run to one runner (--runner).
func RunnerNamed(name string) Option { return func(s *setup) { s.opt.Runner = name } }

// Check runs c, and what it requires but the facts given, and returns its
// results: one for a host-wide check, one per runner it applied to for a
// per-runner check. Without Root, the root is an empty directory. The
// checks c requires run too (the catalog holds them): their results are
// not returned.
func Check(t testing.TB, c *checks.Check, opts ...Option) []checks.CheckResult {
	t.Helper()
	s := &setup{}
	for _, o := range opts {
		o(s)
	}
	if s.env.Root == "" {
		s.env.Root = t.TempDir()
	}
	s.opt.Given = s.given
	if s.opt.Timeout == 0 {
		s.opt.Timeout = time.Minute
	}
	catalog := withRequired(append([]*checks.Check{c}, s.with...))
	if len(catalog) > 1 {
		s.opt.Only = []string{c.ID}
	}
	res, err := checks.Run(context.Background(), &s.env, catalog, s.opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(catalog) == 1 {
		return res.Checks
	}
	var own []checks.CheckResult
	for _, r := range res.Checks {
		if r.Check.ID == c.ID {
			own = append(own, r)
		}
	}
	return own
}

// withRequired is cs and every check they require, directly or through
// the checks they require: the catalog the engine resolves them in. A
// checks.Ref resolves only to a check of cs (With).
func withRequired(cs []*checks.Check) []*checks.Check {
	seen := map[*checks.Check]bool{}
	var out []*checks.Check
	for i := 0; i < len(cs); i++ {
		if seen[cs[i]] {
			continue
		}
		seen[cs[i]] = true
		out = append(out, cs[i])
		cs = append(cs, checks.RequiredChecks(cs, cs[i])...)
	}
	return out
}

// One is Check of a check that must have exactly one result (a host-wide
// check, or a config of one runner).
func One(t testing.TB, c *checks.Check, opts ...Option) checks.CheckResult {
	t.Helper()
	rs := Check(t, c, opts...)
	if len(rs) != 1 {
		t.Fatalf("%s: %d results, want 1:\n%s", c.ID, len(rs), texts(rs))
	}
	return rs[0]
}
