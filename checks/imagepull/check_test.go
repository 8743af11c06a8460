package imagepull

import (
	"errors"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// withAPIAuth puts api-auth in the catalog of a run that lists the cluster:
// the lists gate on it by its ID (kubefacts.AfterAPIAuth).
var withAPIAuth = apigatetest.With()

func waiting(name, image, reason, message string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

func pod(name string, init []corev1.ContainerStatus, containers ...corev1.ContainerStatus) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: name},
		Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: init, ContainerStatuses: containers}}
}

// judge runs the check for the guide's runner on the cluster lists given.
func judge(t *testing.T, l *cluster.Lists) []checks.CheckResult {
	t.Helper()
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", testroot.GuideConfig, 0o600)
	l.Namespace = "gitlab-runner"
	return checktest.Check(t, Check, checktest.Root(root.Dir), checktest.Fact(cluster.ListsFact, l))
}

func TestJudge(t *testing.T) {
	const job = "runner-abc123-project-5-concurrent-0-x"
	backoff := waiting("build", "registry.example.invalid/nope:1", "ImagePullBackOff", `Back-off pulling image "registry.example.invalid/nope:1"`)
	pass := checktest.ResultWant{Runner: 1, Status: checks.StatusPass}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		errs map[string]error
		want checktest.ResultWant
	}{
		{"no-pods", nil, nil, pass},
		// Waiting for another reason, and a pod that is not a job's, are not this check's.
		{"other-waits", []corev1.Pod{
			pod(job, nil, waiting("build", "busybox:1.36", "ContainerCreating", "")),
			pod("pause-pod-0", nil, backoff),
		}, nil, pass},
		{"backoff", []corev1.Pod{pod(job, nil, backoff, waiting("helper", "registry.gitlab.com/helper:x", "ContainerCreating", ""))}, nil,
			checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error, Says: []string{
				"Job pod gitlab-runner/" + job + " cannot pull registry.example.invalid/nope:1: the image does not exist, or the node cannot reach its registry",
				"pod gitlab-runner/" + job + " container build: ImagePullBackOff: image registry.example.invalid/nope:1: Back-off pulling image"}}}}},
		// An init container's failure comes first, and each failing
		// container of the pod is evidence of its one finding; each pod
		// is a finding.
		{"init-and-invalid-name", []corev1.Pod{
			pod(job, []corev1.ContainerStatus{waiting("init-permissions", "helper:x", "ErrImagePull", "pull access denied")},
				waiting("build", "Not/Valid", "InvalidImageName", "couldn't parse image name")),
			pod("runner-abc123-project-5-concurrent-1-y", nil, backoff),
		}, nil, checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{
			{Severity: checks.Error, Says: []string{"Job pod gitlab-runner/" + job + " cannot pull helper:x:",
				"container init-permissions: ErrImagePull: image helper:x: pull access denied", "container build: InvalidImageName: image Not/Valid: couldn't parse image name"}},
			{Severity: checks.Error, Says: []string{"Job pod gitlab-runner/runner-abc123-project-5-concurrent-1-y cannot pull registry.example.invalid/nope:1"}},
		}}},
		{"pods-not-listed", nil, map[string]error{"runner pods": errors.New("the server was slow")},
			checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "listing runner pods: the server was slow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checktest.WantResults(t, judge(t, &cluster.Lists{RunnerPods: tc.pods, Errs: tc.errs}), tc.want)
		})
	}
}

func TestCases(t *testing.T) { checktest.Cases(t, Check, withAPIAuth) }
