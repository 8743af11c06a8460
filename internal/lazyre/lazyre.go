// Package lazyre compiles a regular expression on its first use instead of
// at package initialisation. Every doctor run pays for what its packages
// compile before main, used or not: an expression that only a bundle, a
// version string or a log scan needs is compiled by the run that needs it.
package lazyre

import (
	"regexp"
	"sync"
)

// MustCompile returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp on every call; it panics, as
// regexp.MustCompile does, if expr does not compile. Each expression is
// compiled by a test at least once, so a typo still fails the tests.
func MustCompile(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
