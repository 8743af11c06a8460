package namespacequota

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// The leaked objects' delete is one command whatever the values: the
// kubeconfig's path and context are one word each (or the block is
// withheld), and a namespace or an object name the apiserver gave that is
// not one is never printed (-rf, --all and a/b included: a name is never
// an option or a path of kubectl's).
func TestDeleteLeakedHoldsHostileValues(t *testing.T) {
	leaked := []string{"runner-abc-project-5-concurrent-0-x", "runner-abc-project-5-concurrent-1-y"}
	benign := deleteLeaked(hostilefix.KubectlOf("plain", "plain"), "secrets", "gitlab-runner", leaked)
	want := "KUBECONFIG=plain kubectl --context plain delete secrets -n gitlab-runner runner-abc-project-5-concurrent-0-x runner-abc-project-5-concurrent-1-y"
	if benign.Kind != checks.KindShell || benign.Text != want {
		t.Fatalf("the block is %v, want\n%s", benign, want)
	}
	if err := (fixproof.Checker{}).Step(benign); err != nil {
		t.Error(err)
	}
	hostilefix.HoldsValues(t, hostile.Values, func(v string) checks.Steps {
		return checks.Steps{deleteLeaked(hostilefix.KubectlOf(v, v), "secrets", "gitlab-runner", leaked)}
	})
	hostilefix.HoldsNames(t, hostile.Values, fixcode.NamespaceName, func(v string) checks.Steps {
		return checks.Steps{deleteLeaked(hostilefix.KubectlOf("ctx", "ctx"), "secrets", v, leaked)}
	})
	for _, v := range hostile.Values {
		if v == "plain" {
			continue
		}
		for _, name := range []string{v, "runner-abc-project-" + v} {
			got := deleteLeaked(hostilefix.KubectlOf("plain", "plain"), "secrets", "gitlab-runner", append([]string{leaked[0]}, name))
			if fixcode.ObjectName(name) == nil {
				// A name ("runner-abc-project--rf"): the last word, whole.
				if s := hostilefix.MustShape(t, got.Text); got.Kind != checks.KindShell || s.Words[len(s.Words)-1] != name {
					t.Errorf("name %q is not the last word: %v", name, got)
				}
				continue
			}
			if !hostilefix.WithheldStep(got) {
				t.Errorf("name %q was printed: %v", name, got)
			}
		}
	}
}
