package pendingunschedulable

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

func podNamed(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// describe pod is one command whatever the values: the kubeconfig's path
// and context one word each (or the block withheld), and a pod's
// namespace or name that is not one never printed.
func TestDescribePodHoldsHostileValues(t *testing.T) {
	benign := describePod(hostilefix.KubectlOf("plain", "plain"), podNamed("gitlab-runner", jobName))
	if want := "KUBECONFIG=plain kubectl --context plain describe pod -n gitlab-runner " + jobName; benign.Kind != checks.KindShell || benign.Text != want {
		t.Fatalf("the block is %v, want\n%s", benign, want)
	}
	if err := (fixproof.Checker{}).Step(benign); err != nil {
		t.Error(err)
	}
	hostilefix.HoldsValues(t, hostile.Values, func(v string) checks.Steps {
		return checks.Steps{describePod(hostilefix.KubectlOf(v, v), podNamed("gitlab-runner", jobName))}
	})
	hostilefix.HoldsNames(t, hostile.Values, fixcode.NamespaceName, func(v string) checks.Steps {
		return checks.Steps{describePod(hostilefix.KubectlOf("ctx", "ctx"), podNamed(v, jobName))}
	})
	hostilefix.HoldsNames(t, hostile.Values, fixcode.ObjectName, func(v string) checks.Steps {
		return checks.Steps{describePod(hostilefix.KubectlOf("ctx", "ctx"), podNamed("gitlab-runner", v))}
	})
}

// Through the check: a Pending job pod whose name the apiserver gives as
// no pod's name is still the finding (its cause quotes the name as
// prose), and its fix withholds the command.
func TestHostilePodNameIsWithheld(t *testing.T) {
	p := pending(jobName, "1", "1Gi")
	p.Name = "runner-abc-project-5-$(touch /tmp/pwned)"
	rs := judge(t, &cluster.Lists{RunnerPods: []corev1.Pod{p}, Nodes: []corev1.Node{node("rented-1", "4", "16Gi")}})
	if len(rs) != 1 || len(rs[0].Findings) != 1 {
		t.Fatalf("want one finding: %+v", rs)
	}
	f := rs[0].Findings[0]
	if len(f.Fix.Blocks()) != 0 || !strings.Contains(f.Fix.String(), "doctor prints no command here: the pod's name is not a valid object name") {
		t.Errorf("the fix is %v", f.Fix)
	}
}
