package checks_test

import (
	"errors"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// A fact whose error is marked CouldNotCheck makes what needs it unknown,
// down the chain; an unmarked error still skips (nothing to check).
func TestCouldNotCheckFactMakesDependentsUnknown(t *testing.T) {
	refused := &checks.Fact[int]{ID: "client", Compute: func(*checks.Pass) (int, error) {
		return 0, checks.CouldNotCheck(errors.New("the credential is a program doctor does not run"))
	}}
	derived := &checks.Fact[int]{ID: "lists", Requires: []checks.Node{refused}, Compute: func(*checks.Pass) (int, error) { return 1, nil }}
	missing := &checks.Fact[int]{ID: "kubeconfig", Compute: func(*checks.Pass) (int, error) { return 0, errors.New("no kubeconfig") }}
	got := run(t, []*checks.Check{mk("auth", ok, refused), mk("nodes", ok, derived), mk("file", ok, missing)}, checks.Options{})
	wantStatus(t, got, "auth", checks.StatusUnknown, "needs client: the credential is a program doctor does not run")
	wantStatus(t, got, "nodes", checks.StatusUnknown, "needs client")
	wantStatus(t, got, "file", checks.StatusSkipped, "needs kubeconfig: no kubeconfig")
}
