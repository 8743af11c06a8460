package nodelocaldns

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// fixes are the steps of fs' fixes, in order.
func fixes(fs []checks.Finding) checks.Steps {
	var out checks.Steps
	for _, f := range fs {
		out = append(out, f.Fix...)
	}
	return out
}

// The cluster's fixes hold any kubectl facts give (its kubeconfig and
// context are data words), and a node name that is none is left out of
// the label command with a sentence that says so.
func TestClusterFixesHoldHostileValues(t *testing.T) {
	ds := daemonSet()
	cases := func(name string) ([]corev1.Node, *nodedns.AddonObjects) {
		nodes := []corev1.Node{node("rented-1", false, true), node(name, false, true), node("rented-3", true, true), node("rented-4", true, true)}
		v := &nodedns.AddonObjects{DaemonSets: []appsv1.DaemonSet{*ds}, Pods: []corev1.Pod{
			*dnsPod("node-dns-a", "rented-4", false),
		}}
		return nodes, v
	}
	nodes, v := cases("rented-2")
	benign, _ := judge(nodes, v, hostilefix.Kubectl("plain"))
	texts := []string{}
	for _, b := range fixes(benign).Blocks() {
		texts = append(texts, b.Text)
	}
	wantText := "KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain label node rented-1 rented-2 socialweb.computer/node-local-dns=true\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain -n kube-system describe daemonset node-dns\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain describe node rented-3\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain -n kube-system describe pod -l app.kubernetes.io/name=socialweb-node-dns\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain -n kube-system logs -l app.kubernetes.io/name=socialweb-node-dns --prefix"
	if got := strings.Join(texts, "\n"); got != wantText {
		t.Fatalf("blocks\n%s\nwant\n%s", got, wantText)
	}
	// The kubectl facts give: one word each, whatever they hold.
	if n := hostilefix.HoldsValues(t, hostile.Values, func(h string) checks.Steps {
		got, _ := judge(nodes, v, hostilefix.Kubectl(h))
		return fixes(got)
	}); n != len(hostilefix.KubectlValues()) {
		t.Errorf("%d of %d values printed", n, len(hostilefix.KubectlValues()))
	}
	for _, h := range hostile.Values {
		// A node's name: a valid one is a word of the label command; one
		// that is none is left out, and a sentence names it, quoted.
		nodes, v := cases(h)
		got, _ := judge(nodes, v, hostilefix.Kubectl("plain"))
		label := got[0].Fix
		cmd := hostilefix.BlockShape(t, label.Blocks()[0])
		if fixcode.ObjectName(h) == nil {
			if want := fmt.Sprintf(`"label", "node", "rented-1", %q, "socialweb.computer/node-local-dns=true")`, h); len(cmd.Stmts) != 1 || !strings.HasSuffix(cmd.Stmts[0], want) {
				t.Errorf("%q: %s", h, cmd)
			}
			continue
		}
		if len(cmd.Stmts) != 1 || !strings.Contains(cmd.Stmts[0], `"label", "node", "rented-1", "socialweb.computer/node-local-dns=true")`) {
			t.Errorf("%q: the label command is %s", h, cmd)
		}
		said := label.String()
		if !strings.Contains(said, fmt.Sprintf("doctor leaves %q out of the command: it is no node's name (not a valid object name", h)) {
			t.Errorf("%q: the fix does not say it is left out:\n%s", h, said)
		}
		if strings.ContainsAny(said, "\u202e\u200b") || (strings.Contains(h, "\n") && strings.Contains(said, h)) {
			t.Errorf("%q is in the fix raw:\n%s", h, said)
		}
	}
}

// The only node's name is none: no label command, only the sentence; a
// DaemonSet name that is none withholds the describe block.
func TestNoValidNodeName(t *testing.T) {
	steps := labelNodes(fixcode.Command("kubectl"), []string{"x\n$(id)"})
	if len(steps.Blocks()) != 0 || len(steps) != 1 || !strings.Contains(steps[0].Text, `doctor leaves "x\n$(id)" out of the command`) {
		t.Errorf("%+v", steps)
	}
	st := describeDaemonSet(fixcode.Command("kubectl"), "node-dns;id", []string{"rented-1"})
	if st.Kind != checks.KindText || !strings.Contains(st.Text, "the DaemonSet's name is not a valid object name") {
		t.Errorf("%+v", st)
	}
}

// The probe's fixes carry the kubectl as data too.
func TestProbeFixesHoldHostileKubectl(t *testing.T) {
	pr := &nodedns.Probe{Server: "169.254.20.10:53", Why: "test", Answers: []dnsq.Answer{{Net: "udp", Name: "gitlab.example.invalid.", Outcome: dnsq.Timeout}}}
	if s := hostilefix.BlockShape(t, findings(pr, "", hostilefix.Kubectl("plain"))[0].Fix.Blocks()[0]); len(s.Stmts) != 2 {
		t.Errorf("the probe's block is not two commands: %s", s)
	}
	if n := hostilefix.HoldsValues(t, hostile.Values, func(h string) checks.Steps {
		return findings(pr, "", hostilefix.Kubectl(h))[0].Fix
	}); n != len(hostilefix.KubectlValues()) {
		t.Errorf("%d of %d values printed", n, len(hostilefix.KubectlValues()))
	}
}
