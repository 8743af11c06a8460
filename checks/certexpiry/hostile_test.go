package certexpiry

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The kubeconfig's path comes from the runner's KUBECONFIG, its user from
// /etc/passwd: every hostile value in them reaching the renewal's install
// is one word, or refused.
func TestRenewFixHoldsHostileValues(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner"}}
	kube := func(file string) *kubefacts.KubeContext {
		return &kubefacts.KubeContext{Kubeconfig: &kubefacts.Kubeconfig{Files: []*kubefacts.KubeFile{{Path: file}}},
			AuthInfo: &clientcmdapi.AuthInfo{LocationOfOrigin: file}}
	}
	env := &hostio.Env{}
	build := func(v string) checks.Steps {
		ra := &hostfacts.RunAs{UIDKnown: true, UID: 999, User: v}
		return renewFix(env, scope, kube("/etc/gitlab-runner/"+v+"/kubeconfig.yaml"), ra)
	}
	values := hostilefix.PathValues(func(v string) string { return "/etc/gitlab-runner/" + v + "/kubeconfig.yaml" })
	if n := hostilefix.HoldsValues(t, values, build); n != len(values) {
		t.Errorf("%d of %d hostile values printed: each is a path of the runner's own", n, len(values))
	}
	ra := &hostfacts.RunAs{UIDKnown: true, UID: 999, User: "gitlab-runner"}
	refused := &kubefacts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user", Roots: scope.Roots}
	for name, got := range map[string]checks.Steps{
		"/etc/shadow":       renewFix(env, scope, kube("/etc/shadow"), ra),
		"past ..":           renewFix(env, scope, kube("/etc/gitlab-runner/../shadow"), ra),
		"relative":          renewFix(env, scope, kube("kubeconfig.yaml"), ra),
		"a runner, refused": renewFix(env, refused, kube("/etc/gitlab-runner/kubeconfig.yaml"), ra),
		"no scope":          renewFix(env, nil, kube("/etc/gitlab-runner/kubeconfig.yaml"), ra),
	} {
		if !hostilefix.Withheld(got) {
			t.Errorf("%s: %s", name, got)
		}
	}
	if got := renewFix(env, scope, kube("/etc/gitlab-runner/kubeconfig.yaml"), ra).String(); !strings.Contains(got, "sudo install -m 0600 -o gitlab-runner ./new.kubeconfig.yaml /etc/gitlab-runner/kubeconfig.yaml") {
		t.Errorf("the renewal reads %s", got)
	}
}
