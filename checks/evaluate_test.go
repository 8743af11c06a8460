package checks_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Evaluate gives a per-runner fact's value for each runner of the executors
// asked, in config order, and for a runner whose requirement failed the
// reason a check would give; a host-wide fact has one value.
func TestEvaluateGivesAFactPerRunner(t *testing.T) {
	_, this := world(sub(1, "a", "kubernetes"), sub(2, "b", "docker"), sub(3, "c", "kubernetes"))
	client := &checks.Fact[string]{ID: "client", Requires: []checks.Node{this}, Compute: func(p *checks.Pass) (string, error) {
		if s := this.Get(p); s.Ref.Name != "c" {
			return "client of " + s.Ref.Name, nil
		}
		return "", errors.New("no kubeconfig")
	}}
	got, err := checks.Evaluate(context.Background(), &hostio.Env{Root: t.TempDir()}, client, checks.Options{}, checks.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(got); s != `[{[[runners]] #1 "a" client of a } {[[runners]] #3 "c"  needs client: no kubeconfig}]` {
		t.Errorf("values %s", s)
	}

	host := &checks.Fact[int]{ID: "unit", Compute: func(*checks.Pass) (int, error) { return 7, nil }}
	got2, err := checks.Evaluate(context.Background(), &hostio.Env{Root: t.TempDir()}, host, checks.Options{})
	if err != nil || len(got2) != 1 || got2[0].Runner != nil || got2[0].Value != 7 || got2[0].Reason != "" {
		t.Errorf("host-wide: %+v, %v; want one value 7", got2, err)
	}
}

// A runner --runner does not name is not evaluated; one that names no
// runner is Run's error.
func TestEvaluateFollowsRunnerSelection(t *testing.T) {
	_, this := world(sub(1, "a", "kubernetes"), sub(2, "b", "kubernetes"))
	got, err := checks.Evaluate(context.Background(), &hostio.Env{Root: t.TempDir()}, this, checks.Options{Runner: "b"})
	if err != nil || len(got) != 1 || got[0].Value.Ref.Name != "b" {
		t.Errorf("--runner b: %+v, %v", got, err)
	}
	if _, err := checks.Evaluate(context.Background(), &hostio.Env{Root: t.TempDir()}, this, checks.Options{Runner: "z"}); err == nil {
		t.Error("--runner z matched nothing, and Evaluate said nothing")
	}
}
