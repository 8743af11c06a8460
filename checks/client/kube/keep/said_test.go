package keep

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	certsv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// documented are messages Kubernetes' components write, as the checks and
// trace read them: each is kept as it was written.
var documented = []string{
	"0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
	"0/1 nodes are available: 1 Insufficient cpu.",
	"0/2000 nodes are available: 2000 Insufficient cpu. preemption: 0/2000 nodes are available.",
	"0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 3 Too many pods. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
	"The node was low on resource: memory. Threshold quantity: 100Mi, available: 81920Ki. Container build was using 2Gi, request is 1Gi, has larger consumption of memory. ",
	"The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 100Mi. ",
	`Container build exceeded its local ephemeral storage limit "2Gi". `,
	"Pod ephemeral local storage usage exceeds the total limit of containers 4Gi. ",
	"Taint manager: deleting due to NoExecute taint",
	"Eviction API: evicting",
	"default-scheduler: preempting to accommodate a higher priority pod",
	"Preempted by pod 0c8e3b5a-8f7e-4a0e-9b1c-2d3e4f5a6b7c on node rented-1",
	"Pod was terminated in response to imminent node shutdown.",
	`Back-off pulling image "registry.example.invalid/nope:1"`,
	`Pulling image "busybox:1.36"`,
	`Successfully pulled image "busybox:1.36" in 1.234s (1.234s including waiting). Image size: 2167176 bytes.`,
	"back-off 5m0s restarting failed container=build pod=runner-abc-project-1-concurrent-0-x_gitlab-runner(0c8e3b5a-8f7e-4a0e-9b1c-2d3e4f5a6b7c)",
	"pull access denied",
	"kubelet is posting ready status",
	"pod triggered scale-up: [{bench 0->1 (max: 1)}]",
	"Error: ErrImagePull",
}

func TestDocumentedMessagesAreKeptAsWritten(t *testing.T) {
	for _, m := range documented {
		if got := Message(m); got != m {
			t.Errorf("Message(%q) = %q", m, got)
		}
	}
}

// A message with text no documented message accounts for keeps the
// documented spans and "…" for the rest: a log tail, a command with a
// password, a token, a JWT, a key, another team's words.
func TestUndocumentedTextIsElided(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJydW5uZXIifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	for in, want := range map[string]string{
		"AUTH_TOKEN=Tk7Qw3Zp9Lx2Mc5Vb8 curl -u deploy:Pw8Kq2Zm6Tx1 https://x.invalid":         "…",
		"Back-off pulling image \"a:1\": AUTH_TOKEN=Tk7Qw3Zp9Lx2Mc5Vb8":                       "Back-off pulling image \"a:1\" …",
		"0/1 nodes are available: 1 Insufficient cpu. " + jwt:                                 "0/1 nodes are available: 1 Insufficient cpu. …",
		"Container Tk7Qw3Zp9Lx2Mc5Vb8aa exceeded its local ephemeral storage limit \"1Gi\". ": "…",
		"0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: Tk7Qw3Zp9Lx2}.": "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: …}.",
		"":  "",
		"…": "…",
	} {
		if got := Message(in); got != want {
			t.Errorf("Message(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"exec /bin/sh: exec format error":               "exec format error",
		"AUTH_TOKEN=x\nline 2 of the job's log\n" + jwt: "",
		"": "",
	} {
		if got := Terminated(in); got != want {
			t.Errorf("Terminated(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Evicted": "Evicted", "OOMKilled": "OOMKilled", "AKIAQ7LM2XV9RT4WP8NS7x": "…", "AUTH_TOKEN=x": "…", "": ""} {
		if got := Reason(in); got != want {
			t.Errorf("Reason(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzMessage: whatever a server writes, what is kept is what is kept of
// it again (the cut of a cut, analyze of a bundle), and a secret put
// between documented messages, before them or after, is not in it.
func FuzzMessage(f *testing.F) {
	for _, m := range documented {
		f.Add(m, "Tk7Qw3Zp9Lx2Mc5Vb8")
	}
	f.Add("x", "curl -u a:Pw8Kq2Zm6Tx1Lp")
	f.Fuzz(func(t *testing.T, s, secret string) {
		for _, fn := range []func(string) string{Message, Terminated, Reason} {
			once := fn(s)
			if twice := fn(once); twice != once {
				t.Fatalf("not idempotent: %q -> %q -> %q", s, once, twice)
			}
		}
		// A secret is what LooksSecret calls one: a hole of a documented
		// message keeps a name or a word that does not look like one, so
		// "000000000000" after "resource: " is a resource's name
		// (FuzzMessage/c1ed5be2d4b5337b), as it is when s itself holds it.
		if len(secret) < 12 || !strings.ContainsAny(secret, "0123456789") || strings.ContainsAny(secret, " \t\n.,:;\"'()[]{}") ||
			strings.Contains(strings.Join(pieceDefs, ""), secret) || !redact.LooksSecret(secret) || strings.Contains(Message(s), secret) {
			return
		}
		for _, in := range []string{secret, s + " " + secret, secret + " " + s, s + ". " + secret + ". " + s} {
			if out := Message(in); strings.Contains(out, secret) {
				t.Fatalf("Message(%q) = %q keeps %q", in, out, secret)
			}
			if out := Terminated(in); strings.Contains(out, secret) {
				t.Fatalf("Terminated(%q) = %q", in, out)
			}
		}
	})
}

// TestFreeTextIsClassifiedNotKept: a pod, a node, an event and a CSR
// whose every free-text field (status and condition messages, waiting and
// terminated messages, reasons) and every label and taint value carries a
// secret are cut, in protobuf and JSON, to none of them; what a check
// classifies (a documented message, a reason, an allow-listed label's
// value) stays.
func TestFreeTextIsClassifiedNotKept(t *testing.T) {
	const (
		tail  = "AUTH_TOKEN=LogTail7Qw3Zp9Lx2Mc curl -u deploy:LogPw8Kq2Zm6Tx1 eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.LogJwt9Zm6Tx1Kq"
		label = "LabelVal7Qw3Zp9Lx2Mc"
		taint = "TaintVal8Kq2Zm6Tx1Lp"
		msg   = "MsgSecret9Zm6Tx1KqLp"
	)
	evicted := "The node was low on resource: memory. "
	state := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error" + msg, Message: tail}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "runner-x-project-1-concurrent-0-abc", Namespace: "ci",
			Labels: map[string]string{"team.example/secret": label, "app.kubernetes.io/name": "socialweb-node-dns", "job.runner.gitlab.com/pod": label}},
		Status: corev1.PodStatus{Reason: "Evicted", Message: evicted + msg,
			Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: msg, Message: "Eviction API: evicting " + msg}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "build", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull access denied " + tail}},
				LastTerminationState: state}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: state}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"kubernetes.io/arch": "arm64", "pool": label}},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: taint, Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "container runtime network not ready: " + msg}}}}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ci"}, Reason: "FailedScheduling",
		Message: "0/1 nodes are available: 1 Insufficient cpu. " + tail}
	csr := &certsv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Status: certsv1.CertificateSigningRequestStatus{Conditions: []certsv1.CertificateSigningRequestCondition{{Type: certsv1.CertificateFailed, Message: msg}}}}
	for _, obj := range []runtime.Object{pod, node, ev, csr} {
		for _, media := range []string{mediaProto, mediaJSON} {
			cut, err := cutOf(encode(t, obj, media), media, Request{URL: "test", Run: &Run{}})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"LogTail", "LogPw", "LogJwt", "eyJ", label, taint, msg, "deploy"} {
				if bytes.Contains(cut, []byte(s)) {
					t.Errorf("%T %s: the cut holds %q", obj, media, s)
				}
			}
			switch got := decode(t, cut, media, obj).(type) {
			case *corev1.Pod:
				cs := got.Status.ContainerStatuses[0]
				if got.Status.Reason != "Evicted" || got.Status.Message != evicted+"…" || cs.State.Waiting.Message != "pull access denied …" ||
					cs.LastTerminationState.Terminated.Message != "" || cs.LastTerminationState.Terminated.ExitCode != 1 ||
					got.Labels["app.kubernetes.io/name"] != "socialweb-node-dns" || got.Labels["team.example/secret"] != "" {
					t.Errorf("%s: the pod is not what checks classify: %+v", media, got)
				}
				if _, ok := got.Labels["job.runner.gitlab.com/pod"]; !ok {
					t.Errorf("%s: a label's key is gone", media)
				}
			case *corev1.Node:
				if got.Labels["kubernetes.io/arch"] != "arm64" || got.Spec.Taints[0].Key != "dedicated" || got.Status.Conditions[0].Message != "container runtime network not ready …" {
					t.Errorf("%s: the node is not what checks classify: %+v", media, got)
				}
			case *corev1.Event:
				if got.Message != "0/1 nodes are available: 1 Insufficient cpu. …" {
					t.Errorf("%s: event message %q", media, got.Message)
				}
			}
		}
	}
	// A node_selector's key, once the runner's config names it, keeps its
	// value.
	ReadLabelKeys("pool")
	cut, err := JSON(encode(t, node, mediaJSON), Request{URL: "test", Run: &Run{}})
	if err != nil || !bytes.Contains(cut, []byte(label)) {
		t.Errorf("a node_selector key's value is not kept: %v %s", err, cut)
	}
}

// A message compiles only the pieces whose needle it holds: a healthy
// node's conditions need a handful of the documented messages, not the 88
// whose compilation cost a fresh process 11 to 14 ms on a warm run's
// critical path. What each keeps is what Message keeps.
func TestAMessageCompilesOnlyThePiecesItHolds(t *testing.T) {
	var compiled []string
	ps := newPieces(pieceDefs, func(def string) *compiledPiece {
		compiled = append(compiled, def)
		return compilePiece(def)
	})
	if len(compiled) != 0 {
		t.Fatalf("%d pieces compiled before any message", len(compiled))
	}
	conditions := []string{"kubelet is posting ready status", "kubelet has sufficient memory available",
		"kubelet has no disk pressure", "kubelet has sufficient PID available", "a condition no component writes"}
	for _, m := range conditions {
		if got, want := keptOf(ps, m), Message(m); got != want {
			t.Errorf("%q kept as %q, Message keeps %q", m, got, want)
		}
	}
	for _, def := range compiled {
		n := needle(def)
		held := false
		for _, m := range conditions {
			held = held || strings.Contains(m, n)
		}
		if !held {
			t.Errorf("compiled %q, whose needle %q no message holds", def, n)
		}
	}
	if len(compiled) > 8 {
		t.Errorf("%d of %d pieces compiled for %d node conditions", len(compiled), len(pieceDefs), len(conditions))
	}
	t.Logf("%d of %d pieces compiled", len(compiled), len(pieceDefs))
}

// Every piece compiles: compiled at first use, a piece no test message
// holds would otherwise panic first on a server's message.
func TestEveryPieceCompiles(t *testing.T) {
	for _, def := range pieceDefs {
		if _, err := regexp.Compile(def); err != nil {
			t.Errorf("%q: %v", def, err)
		}
	}
}
