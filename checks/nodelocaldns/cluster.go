package nodelocaldns

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

// judge finds, per cause, the nodes whose jobs cannot resolve. noneWorks
// says no Ready node has a Ready DNS pod, so a failing direct probe is this
// cluster-wide cause and not some other node's trouble.
func judge(nodes []corev1.Node, v *nodedns.AddonObjects, kubectl fixcode.Cmd) (out []checks.Finding, noneWorks bool) {
	byNode := map[string][]*corev1.Pod{}
	for i := range v.Pods {
		if p := &v.Pods[i]; p.DeletionTimestamp == nil {
			byNode[podNode(p)] = append(byNode[podNode(p)], p)
		}
	}
	var unlabelled, unlabelledServed, noPod, notReady []string
	var notReadyEv []checks.Evidence
	working := 0
	for i := range nodes {
		n := &nodes[i]
		labelled, ready := n.Labels[nodedns.NodeLabel] == "true", cluster.NodeReady(n)
		served := false
		for _, p := range byNode[n.Name] {
			served = served || podReady(p)
		}
		if served && ready {
			working++
		}
		switch {
		case !labelled && served:
			unlabelledServed = append(unlabelledServed, n.Name)
		case !labelled:
			unlabelled = append(unlabelled, n.Name)
		case len(v.DaemonSets) == 0 || !ready:
			// No DaemonSet is reported once below; a NotReady node takes no
			// job, and its DNS pod cannot be Ready before its kubelet is.
		case len(byNode[n.Name]) == 0:
			noPod = append(noPod, n.Name)
		case !served:
			notReady = append(notReady, n.Name)
			for _, p := range byNode[n.Name] {
				notReadyEv = append(notReadyEv, checks.Evidence{Source: "pod " + nodedns.Namespace + "/" + p.Name, Detail: "on " + n.Name + ": " + podState(p)})
			}
		}
	}
	noneWorks = len(nodes) > 0 && working == 0

	if len(v.DaemonSets) == 0 {
		out = append(out, noDaemonSet(nodes, v, kubectl))
	}
	if len(unlabelled) > 0 {
		out = append(out, checks.Finding{
			Cause: fmt.Sprintf("%s %s not labelled %s=true, so the DaemonSet places no DNS pod there: %s joined with an older user_data. "+
				"A job pod there finds nothing at 169.254.20.10 and fails at the clone with `Could not resolve host`.",
				upper(nodesPhrase(unlabelled)), verb(len(unlabelled), "is", "are"), nodedns.NodeLabel, pronoun(len(unlabelled))),
			Evidence: []checks.Evidence{{Source: "GET /api/v1/nodes", Detail: "without " + nodedns.NodeLabel + "=true: " + first(unlabelled, 10)}},
			Fix: append(checks.Steps{
				checks.Say(fmt.Sprintf("Replace %s with nodes booted from the current user_data; until then, label %s:", pronoun(len(unlabelled)), pronoun(len(unlabelled))))},
				labelNodes(kubectl, unlabelled)...),
		})
	}
	if len(noPod) > 0 {
		out = append(out, checks.Finding{
			Cause: fmt.Sprintf("%s %s labelled %s=true and Ready, but no %s pod is placed there: the DaemonSet does not select %s "+
				"(its nodeSelector or tolerations), so job pods there cannot resolve anything and fail at the clone with `Could not resolve host`.",
				upper(nodesPhrase(noPod)), verb(len(noPod), "is", "are"), nodedns.NodeLabel, nodedns.PodName, pronoun(len(noPod))),
			Evidence: append([]checks.Evidence{{Source: nodedns.PodsSource, Detail: "no pod labelled " + nodedns.PodLabel + "=" + nodedns.PodName + " on " + first(noPod, 10)}}, dsEvidence(v, nodes, noPod)...),
			Fix: checks.Steps{
				checks.Say("Compare the DaemonSet's node selector and tolerations with the node's labels and taints:"),
				describeDaemonSet(kubectl, v.DaemonSets[0].Name, noPod),
			},
		})
	}
	if len(notReady) > 0 {
		out = append(out, checks.Finding{
			Cause: fmt.Sprintf("The %s pod on %s is not Ready: nothing answers at 169.254.20.10 there, so job pods fail at the clone with `Could not resolve host`.",
				nodedns.PodName, nodesPhrase(notReady)),
			Evidence: firstEvidence(notReadyEv, 10),
			Fix: checks.Steps{checks.Say("The reason is in the pods' events and log:"),
				checks.Commands(kubectl.Arg("-n", "kube-system", "describe", "pod", "-l", nodedns.PodSelector), logsOf(kubectl))},
		})
	}
	if len(unlabelledServed) > 0 {
		out = append(out, checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s %s not labelled %s=true (joined with an older user_data), yet %s a Ready DNS pod because the DaemonSet "+
				"does not select on the label; a DaemonSet that does will leave %s without DNS.",
				upper(nodesPhrase(unlabelledServed)), verb(len(unlabelledServed), "is", "are"), nodedns.NodeLabel,
				verb(len(unlabelledServed), "runs", "run"), pronoun(len(unlabelledServed))),
			Evidence: []checks.Evidence{{Source: "GET /api/v1/nodes", Detail: "without " + nodedns.NodeLabel + "=true: " + first(unlabelledServed, 10)}},
			Fix: append(checks.Steps{checks.Say("Replace them with nodes booted from the current user_data, or label them:")},
				labelNodes(kubectl, unlabelledServed)...),
		})
	}
	return out, noneWorks
}

// noDaemonSet is the add-on pass that never ran. At zero nodes no job has
// failed from it yet, but the DaemonSet is an API object that exists before
// any node: the next node a job brings up has no DNS, and that job fails.
func noDaemonSet(nodes []corev1.Node, v *nodedns.AddonObjects, kubectl fixcode.Cmd) checks.Finding {
	others := "none"
	if len(v.Others) > 0 {
		others = first(v.Others, 10)
	}
	f := checks.Finding{
		Evidence: []checks.Evidence{
			{Source: nodedns.DaemonSetsSource, Detail: fmt.Sprintf("no DaemonSet whose pods are labelled %s=%s; others: %s", nodedns.PodLabel, nodedns.PodName, others)},
			{Source: nodedns.PodsSource, Detail: fmt.Sprintf("%d pods labelled %s=%s", len(v.Pods), nodedns.PodLabel, nodedns.PodName)},
		},
		Fix: checks.Steps{
			checks.Say("Run the provider's add-on pass for this cluster: on the host that runs the provider that rents this cluster's nodes, " +
				"its log says \"applied the node network add-ons\" once it has. Then a pod per node:"),
			checks.Commands(podsWide(kubectl)),
		},
	}
	const missing = "No DaemonSet in kube-system runs the node-local DNS (pods labelled " + nodedns.PodLabel + "=" + nodedns.PodName + "): " +
		"the provider's add-on pass never applied the node network add-ons."
	if len(nodes) == 0 {
		f.Severity = checks.Warning
		f.Cause = missing + " The cluster is at rest with zero nodes, so no job has failed from it yet; but the DaemonSet " +
			"exists before any node does, and the next node a job brings up will have nothing at 169.254.20.10: that job fails at the clone with `Could not resolve host`."
		return f
	}
	names := make([]string, len(nodes))
	for i := range nodes {
		names[i] = nodes[i].Name
	}
	none := fmt.Sprintf("None of the %d nodes runs", len(nodes))
	if len(nodes) == 1 {
		none = "The one node does not run"
	}
	f.Cause = missing + " " + none + " a DNS server at 169.254.20.10, so every job placed there fails at the clone with `Could not resolve host`."
	f.Evidence = append(f.Evidence, checks.Evidence{Source: "GET /api/v1/nodes", Detail: first(names, 10)})
	return f
}

// dsEvidence shows what the DaemonSet selects next to what the nodes offer.
func dsEvidence(v *nodedns.AddonObjects, nodes []corev1.Node, names []string) []checks.Evidence {
	var ev []checks.Evidence
	for _, ds := range v.DaemonSets {
		ev = append(ev, checks.Evidence{Source: "daemonset " + nodedns.Namespace + "/" + ds.Name, Detail: fmt.Sprintf(
			"nodeSelector %s; desired %d, ready %d", labels(ds.Spec.Template.Spec.NodeSelector), ds.Status.DesiredNumberScheduled, ds.Status.NumberReady)})
	}
	want := map[string]bool{}
	for _, n := range names[:min(len(names), 3)] {
		want[n] = true
	}
	for i := range nodes {
		if n := &nodes[i]; want[n.Name] && len(n.Spec.Taints) > 0 {
			t := make([]string, len(n.Spec.Taints))
			for j, x := range n.Spec.Taints {
				t[j] = x.ToString()
			}
			ev = append(ev, checks.Evidence{Source: "node " + n.Name, Detail: "taints " + strings.Join(t, ", ")})
		}
	}
	return ev
}

// podNode is the node a DNS pod is on, or is meant for: the DaemonSet
// controller pins an unscheduled pod to its node with a metadata.name field
// affinity before the scheduler binds it.
func podNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podState says why a pod is not Ready: its phase and each container's wait.
func podState(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	if s == "" {
		s = "no status"
	}
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			s += fmt.Sprintf(", %s waiting: %s %s", c.Name, c.State.Waiting.Reason, trim(keep.Message(c.State.Waiting.Message)))
		case c.State.Terminated != nil:
			s += fmt.Sprintf(", %s terminated: %s (exit %d)", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode)
		case !c.Ready:
			s += fmt.Sprintf(", %s running but not ready (restarts %d)", c.Name, c.RestartCount)
		}
	}
	return strings.TrimSpace(s)
}

func labels(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// nodesPhrase is "node a" or "3 nodes (a, b, c)".
func nodesPhrase(names []string) string {
	if len(names) == 1 {
		return "node " + names[0]
	}
	return fmt.Sprintf("%d nodes (%s)", len(names), first(names, 10))
}

func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func upper(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func first(xs []string, n int) string {
	if len(xs) > n {
		return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more", len(xs)-n)
	}
	return strings.Join(xs, ", ")
}

func firstEvidence(ev []checks.Evidence, n int) []checks.Evidence {
	if len(ev) > n {
		return append(ev[:n:n], checks.Evidence{Source: nodedns.PodsSource, Detail: fmt.Sprintf("and %d more", len(ev)-n)})
	}
	return ev
}

func trim(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// labelNodes labels the first ten of names for the DaemonSet. A node's
// name comes from the API, which takes only a DNS-1123 subdomain
// (kubernetes pkg/apis/core/validation/validation.go, v1.37.2:
// ValidateNodeName = NameIsDNSSubdomain): one that is not (a saved bundle
// can hold anything) is left out of the command, and a sentence says so.
func labelNodes(kubectl fixcode.Cmd, names []string) checks.Steps {
	var valid, bad []string
	var why error
	for _, n := range names {
		if err := fixcode.ObjectName(n); err != nil {
			bad = append(bad, fmt.Sprintf("%q", n))
			if why == nil {
				why = err
			}
		} else if len(valid) < 10 {
			valid = append(valid, n)
		}
	}
	var out checks.Steps
	if len(valid) > 0 {
		out = append(out, checks.Commands(kubectl.Arg("label", "node").Arg(valid...).Arg(nodedns.NodeLabel+"=true")))
	}
	if len(bad) > 0 {
		out = append(out, checks.Say(fmt.Sprintf("doctor leaves %s out of the command: %s no node's name (%v).",
			first(bad, 10), verb(len(bad), "it is", "they are"), why)))
	}
	return out
}

// describeDaemonSet shows the DaemonSet and the first of the nodes it
// leaves out, each name checked (an object name: ObjectName).
func describeDaemonSet(kubectl fixcode.Cmd, ds string, nodes []string) checks.Step {
	if err := fixcode.ObjectName(ds); err != nil {
		return checks.Withheld(fmt.Errorf("the DaemonSet's name is %w", err))
	}
	var node string
	var why error
	for _, n := range nodes {
		if why = fixcode.ObjectName(n); why == nil {
			node = n
			break
		}
	}
	cmds := []fixcode.Cmd{kubectl.Arg("-n", "kube-system", "describe", "daemonset", ds)}
	switch {
	case node != "":
		cmds = append(cmds, kubectl.Arg("describe", "node", node))
	case why != nil:
		return checks.Withheld(fmt.Errorf("the node's name is %w", why))
	}
	return checks.Commands(cmds...)
}

// podsWide lists the node DNS pods in the runner's cluster, with their nodes.
func podsWide(kubectl fixcode.Cmd) fixcode.Cmd {
	return kubectl.Arg("-n", "kube-system", "get", "pods", "-l", nodedns.PodSelector, "-o", "wide")
}

// logsOf reads the node DNS pods' logs in the runner's cluster.
func logsOf(kubectl fixcode.Cmd) fixcode.Cmd {
	return kubectl.Arg("-n", "kube-system", "logs", "-l", nodedns.PodSelector, "--prefix")
}
