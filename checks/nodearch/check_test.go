package nodearch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

func node(name, arch string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ArchLabel: arch}}}
}

const configTOML = "[[runners]]\n  name = \"k\"\n  executor = \"kubernetes\"\n  [runners.kubernetes]\n    namespace = \"gitlab-runner\"\n"

func entry(t *testing.T, k runnerconfig.Kubernetes) *configfacts.RunnerEntry {
	t.Helper()
	cfg, _, err := runnerconfig.Decode([]byte(configTOML))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Runners[0]
	r.Kubernetes = &k
	return &configfacts.RunnerEntry{Runner: r, File: &configfacts.ConfigFile{Path: "/etc/gitlab-runner/config.toml", Data: []byte(configTOML), Config: cfg}}
}

// runJudge runs the check on a host whose one runner's [runners.kubernetes]
// is k, in a cluster whose lists are nodes and pods (given facts).
func runJudge(t *testing.T, k runnerconfig.Kubernetes, nodes []corev1.Node, pods []corev1.Pod) checks.CheckResult {
	t.Helper()
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", configTOML, 0o600)
	return checktest.One(t, Check, checktest.Root(root.Dir),
		checktest.Fact(configfacts.RunnerEntryFact, entry(t, k)),
		checktest.Fact(cluster.ListsFact, &cluster.Lists{Namespace: "gitlab-runner", Nodes: nodes, RunnerPods: pods}))
}

func TestHelperArch(t *testing.T) {
	for _, tc := range []struct {
		k    runnerconfig.Kubernetes
		live bool
		want string
	}{
		{runnerconfig.Kubernetes{}, true, "amd64"},
		{runnerconfig.Kubernetes{NodeSelector: map[string]string{ArchLabel: "arm64"}}, true, "arm64"},
		// node_selector wins over autoset (prepareHelperImage runs after it).
		{runnerconfig.Kubernetes{HelperImageAutosetArchAndOS: true, NodeSelector: map[string]string{ArchLabel: "arm64"}}, true, "arm64"},
		{runnerconfig.Kubernetes{HelperImageAutosetArchAndOS: true}, false, ""},
		{runnerconfig.Kubernetes{HelperImage: "registry.example.invalid/helper:x"}, true, ""},
	} {
		if got := HelperArch(&tc.k, tc.live); got.Arch != tc.want {
			t.Errorf("%+v live=%v: arch %q (%s), want %q", tc.k, tc.live, got.Arch, got.Why, tc.want)
		}
	}
}

func TestJudge(t *testing.T) {
	arm := map[string]string{ArchLabel: "arm64"}
	crashed := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: "runner-abc-project-5-concurrent-0-x"},
		Spec:       corev1.PodSpec{NodeName: "rented-1"},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "build", Image: "example.invalid/amd64-only:1",
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "exec /bin/sh: exec format error"}}}}},
	}
	cases := []struct {
		name   string
		k      runnerconfig.Kubernetes
		nodes  []corev1.Node
		pods   []corev1.Pod
		status checks.Status
		sev    checks.Severity
		says   []string
	}{
		{"amd64-nodes-default-helper", runnerconfig.Kubernetes{}, []corev1.Node{node("rented-1", "amd64")}, nil, checks.StatusPass, 0, nil},
		{"no-nodes", runnerconfig.Kubernetes{}, nil, nil, checks.StatusPass, 0, nil},
		{"arm64-nodes-default-helper", runnerconfig.Kubernetes{}, []corev1.Node{node("rented-1", "arm64"), node("rented-2", "arm64")}, nil, checks.StatusFail, checks.Error,
			[]string{"the helper image is linux/amd64 (the executor's default", "rented-1 (arm64), rented-2 (arm64)", "exec format error", `container not found ("helper")`,
				`Every node is arm64: pin the jobs to it`, "[runners.kubernetes.node_selector]\n\"kubernetes.io/arch\" = \"arm64\""}},
		{"mixed-nodes-default-helper", runnerconfig.Kubernetes{}, []corev1.Node{node("rented-1", "arm64"), node("rented-2", "amd64")}, nil, checks.StatusFail, checks.Error,
			[]string{"may land on rented-1 (arm64)", `"kubernetes.io/arch" = "amd64"`}},
		{"selector-arm64", runnerconfig.Kubernetes{NodeSelector: arm}, []corev1.Node{node("rented-1", "arm64"), node("rented-2", "amd64")}, nil, checks.StatusPass, 0, nil},
		{"selector-matches-none", runnerconfig.Kubernetes{NodeSelector: arm}, []corev1.Node{node("rented-2", "amd64")}, nil, checks.StatusFail, checks.Warning,
			[]string{`node_selector kubernetes.io/arch = "arm64" matches no node (the cluster has 1 node: amd64: rented-2)`}},
		{"build-image-wrong-arch", runnerconfig.Kubernetes{}, []corev1.Node{node("rented-1", "amd64")}, []corev1.Pod{crashed}, checks.StatusFail, checks.Error,
			[]string{"a recent job pod's container died with `exec format error`", `container "build" (image example.invalid/amd64-only:1) on node rented-1: exec format error`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runJudge(t, tc.k, tc.nodes, tc.pods)
			checktest.WantSays(t, r, tc.status, tc.says...)
			if tc.sev != 0 && (len(r.Findings) == 0 || r.Findings[0].Severity != tc.sev) {
				t.Errorf("want a %s finding:\n%s", tc.sev, checktest.Text(r))
			}
			if tc.status == checks.StatusPass && len(r.Findings) > 0 {
				t.Errorf("want no finding:\n%s", checktest.Text(r))
			}
		})
	}
}
