//go:build integration

package e2e

import (
	"strings"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// Secrets in what a cluster says in free text (issue 29): a job's log tail
// where FallbackToLogsOnError puts it (a container's terminated.message),
// tokens, a curl with a password, a JWT and a bare key in every message a
// pod, an event, a node and a CSR carry, in reasons, label values and taint
// values, the runner's and another team's.
var freeTextSecrets = map[string]string{
	"log tail":          "AUTH_TOKEN=FtTail7Qw3Zp9Lx2Mc",
	"curl password":     "curl -u deploy:FtCurlPw8Kq2Zm6",
	"jwt":               "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmdCJ9.FtJwtSig9Zm6Tx1Kq",
	"bare key":          "FtBareKey4Lx2Mc7Qw3Zp9",
	"status message":    "FtStatus5Zq2Lm8Tx4Wb7",
	"condition message": "FtCond8Kq3Zm6Tx1Lb9Wr",
	"waiting message":   "FtWait2Wq7Zm4Tx9Lb6Kn",
	"event message":     "FtEvent6Wq1Zm5Tx8Lb3Rn",
	"node message":      "FtNode3Qz6Lm9Tx1Wb4Kr",
	"csr message":       "FtCsr9Kq4Zm7Tx2Lb5Wn",
	"reason":            "FtReason4Zq8Lm2Tx6Wb9",
	"label value":       "FtLabel7Qw3Zp9Lx2Mc",
	"other label value": "FtOther8Kq2Zm6Tx1Lp",
	"taint value":       "FtTaint9Zm6Tx1KqLp2",
}

// saying is free text that carries the secrets a log tail would.
func saying(prefix string, which ...string) string {
	parts := []string{prefix}
	for _, w := range which {
		parts = append(parts, freeTextSecrets[w])
	}
	return strings.Join(parts, " ")
}

// TestNoFreeTextSecretLeavesTheCluster: a bundle made on a real apiserver
// whose pods, events, nodes and CSRs carry secrets in every free-text field,
// reason, label value and taint value, on a host whose runner's command
// line and unit carry a secret under every secret flag, holds none of
// them, nor does any output, nor any 12-character piece of one. The routes
// are taken (the job pods are diagnosed from their statuses and events, the
// other team's pod and the node were read), and runReport holds analyze to
// the live run and the cut run to the run on whole answers.
func TestNoFreeTextSecretLeavesTheCluster(t *testing.T) {
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	env.EnsureNamespace("gitlab-runner")
	env.EnsureNamespace("team-b")
	createNodeDNSDaemonSet(t, env)
	rentNode(t, env, "rented-1", "4", "16Gi", 0)
	env.CreatePod("kube-system", "socialweb-node-dns-x1", "rented-1")
	env.SetPodStatus("kube-system", "socialweb-node-dns-x1", testenv.PodRunning())
	// The node: a label of a team's, a taint's value, a condition's words.
	node, err := env.Clientset().CoreV1().Nodes().Get(t.Context(), "rented-1", metav1.GetOptions{})
	cmdtest.NoErr(t, err)
	node.Labels["team.example/pool"] = freeTextSecrets["label value"]
	node.Spec.Taints = []corev1.Taint{{Key: "team.example/dedicated", Value: freeTextSecrets["taint value"], Effect: corev1.TaintEffectPreferNoSchedule}}
	node, err = env.Clientset().CoreV1().Nodes().Update(t.Context(), node, metav1.UpdateOptions{})
	cmdtest.NoErr(t, err)
	node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: "TeamProbe", Status: corev1.ConditionFalse,
		Reason: "Probe" + freeTextSecrets["reason"], Message: saying("probe failed:", "node message", "curl password", "jwt"),
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()})
	_, err = env.Clientset().CoreV1().Nodes().UpdateStatus(t.Context(), node, metav1.UpdateOptions{})
	cmdtest.NoErr(t, err)

	labels := func(p *corev1.Pod) {
		p.Labels = map[string]string{"job.runner.gitlab.com/pod": "runner-ft-project-5-concurrent-0", "team.example/ticket": freeTextSecrets["label value"]}
		p.Spec.Containers[0].Name = "build"
		p.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	}
	// A job pod waiting for its image, whose every message says a secret.
	waiting := env.CreatePod("gitlab-runner", "runner-ft-project-5-concurrent-0-wait", "", labels)
	st := testenv.PodWaiting("ErrImagePull", saying("pull access denied", "waiting message", "log tail", "bare key"))
	st.ContainerStatuses[0].Name = "build"
	st.Message = saying("Pod was rejected:", "status message", "jwt")
	st.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: saying("0/1 nodes are available: 1 Insufficient cpu.", "condition message", "curl password"), LastTransitionTime: metav1.Now()}}
	env.SetPodStatus("gitlab-runner", waiting.Name, st)
	env.CreatePodEvent(waiting, corev1.EventTypeWarning, "FailedScheduling", saying("0/1 nodes are available: 1 Insufficient cpu.", "event message", "jwt", "bare key"))
	env.CreatePodEvent(waiting, corev1.EventTypeWarning, "Failed", saying("Failed to pull image \"busybox:1.36\":", "event message", "curl password"))
	// A job pod killed for memory, its log tail its termination message,
	// then disrupted with a message of its own.
	oom := env.CreatePod("gitlab-runner", "runner-ft-project-5-concurrent-1-oom", "rented-1", labels)
	now := metav1.Now()
	env.SetPodStatus("gitlab-runner", oom.Name, corev1.PodStatus{Phase: corev1.PodRunning,
		Reason: freeTextSecrets["reason"], Message: saying("Evicted:", "status message"),
		Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI",
			Message: saying("Eviction API: evicting", "condition message", "log tail"), LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "build", Image: "busybox:1.36", Ready: true, RestartCount: 1,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled",
				Message: saying("+ ./deploy.sh\n", "log tail", "curl password", "jwt", "bare key"), FinishedAt: now}}}}})
	// An evicted job pod the runner deleted: its event outlives it.
	env.CreatePodEvent(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: "runner-ft-project-5-concurrent-2-gone"}},
		corev1.EventTypeWarning, "Evicted", saying("The node was low on resource: memory.", "event message", "log tail"))
	// Another team's Pending pod, as doctor lists every Pending pod.
	other := env.CreatePod("team-b", "deploy-api-ft", "", func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": freeTextSecrets["other label value"]}
	})
	ost := testenv.PodWaiting("CreateContainerConfigError", saying("couldn't find key", "waiting message", "bare key"))
	ost.Message = saying("pending:", "status message")
	env.SetPodStatus("team-b", other.Name, ost)
	env.CreatePodEvent(other, corev1.EventTypeWarning, "FailedScheduling", saying("0/1 nodes are available:", "event message", "jwt"))
	// A kubelet serving CSR that failed, saying why with a secret.
	csr := env.CreateServingCSR("csr-ft", "rented-1", false)
	csr.Status.Conditions = append(csr.Status.Conditions, certCondition(saying("signing failed:", "csr message", "curl password")))
	_, err = env.Clientset().CertificatesV1().CertificateSigningRequests().UpdateStatus(t.Context(), csr, metav1.UpdateOptions{})
	cmdtest.NoErr(t, err)

	// The host: the runner's command line and its unit carry a secret
	// under every secret flag.
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour)))
	flags, flagSecrets := secretFlags("Ift")
	root.Runner(4242, 0, map[string]string{"KUBECONFIG": testroot.KubeconfigPath, "PATH": "/usr/bin"}, append([]string{
		"/usr/bin/gitlab-runner", "run", "--working-directory", "/home/gitlab-runner", "--config", "/etc/gitlab-runner/config.toml",
		"--service", "gitlab-runner", "--user", "gitlab-runner"}, flags...)...)
	unitFlags, unitSecrets := secretFlags("Ifu")
	root.Write("/etc/systemd/system/gitlab-runner.service", "[Unit]\nDescription=GitLab Runner\n[Service]\n"+
		"Environment=KUBECONFIG="+testroot.KubeconfigPath+"\n"+
		"ExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml --service gitlab-runner \\\n  "+
		strings.Join(quoteAll(unitFlags), " ")+"\n[Install]\nWantedBy=multi-user.target\n", 0o644)

	now2 := time.Now().UTC().Truncate(time.Second)
	outputs := secretRunOutputs(t, root.Dir, now2)
	secrets := map[string]string{}
	for what, s := range freeTextSecrets {
		secrets[what] = s
	}
	for _, p := range append(flagSecrets, unitSecrets...) {
		secrets[p.where+" "+p.secret] = p.secret
	}
	for what, secret := range secrets {
		for name, out := range outputs {
			if piece := secretPiece(out, secret); piece != "" {
				t.Errorf("%s: the %s secret (%q) is in it as %q:\n%s", name, what, secret, piece, around(out, piece))
			}
		}
	}
	// The routes are taken.
	js := outputs["-o json stdout"]
	for _, want := range []string{
		"runner-ft-project-5-concurrent-0-wait", // image-pull: its waiting reason, the message classified
		"runner-ft-project-5-concurrent-1-oom",  // job-terminations: OOMKilled, then disrupted
		"runner-ft-project-5-concurrent-2-gone", // job-terminations: the Evicted event
		"pull access denied …",                  // what is kept of a waiting message
	} {
		if !strings.Contains(js, want) {
			t.Errorf("-o json does not say %q: a route is not taken", want)
		}
	}
	var tape string
	for name, out := range outputs {
		if strings.HasSuffix(name, "tape.json") {
			tape = out
		}
	}
	for _, want := range []string{"deploy-api-ft", "team.example/pool", "team.example/dedicated", "csr-ft", "TeamProbe"} {
		if !strings.Contains(tape, want) {
			t.Errorf("the tape holds no %q: the route through it was not taken", want)
		}
	}
	runReport(t, "run", "--root", root.Dir, "-o", "json", "--now", now2.Format(time.RFC3339), "--timeout", "60s", "--skip", "gitlab-reachability")
}

// certCondition is a Failed condition saying message.
func certCondition(message string) certv1.CertificateSigningRequestCondition {
	return certv1.CertificateSigningRequestCondition{Type: certv1.CertificateFailed, Status: corev1.ConditionTrue,
		Reason: "SignerFailed", Message: message, LastUpdateTime: metav1.Now()}
}
