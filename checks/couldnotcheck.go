package checks

import "errors"

// ErrCouldNotCheck marks a fact's error that leaves what needs it unknown
// instead of skipped. A fact that fails for want of input ("no kubeconfig")
// makes its dependents skipped: there is nothing for them to check. One
// that could have been computed and was refused (a credential doctor will
// not run, a plugin that did not answer) proved nothing about what depends
// on it, and a run that says "skipped" there would exit 0 having looked at
// none of it.
var ErrCouldNotCheck = errors.New("could not check")

// CouldNotCheck marks err with ErrCouldNotCheck; its text stays err's.
func CouldNotCheck(err error) error {
	if err == nil || errors.Is(err, ErrCouldNotCheck) {
		return err
	}
	return &couldNotCheck{err}
}

type couldNotCheck struct{ err error }

func (c *couldNotCheck) Error() string        { return c.err.Error() }
func (c *couldNotCheck) Unwrap() error        { return c.err }
func (c *couldNotCheck) Is(target error) bool { return target == ErrCouldNotCheck }
