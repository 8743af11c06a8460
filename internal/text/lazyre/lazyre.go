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
// regexp.MustCompile does, if expr does not compile. That panic comes at
// the first use instead of at start-up, so an expression needs a test that
// uses it.
func MustCompile(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
