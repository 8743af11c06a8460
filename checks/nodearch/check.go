// Package nodearch checks that the images a job runs are built for the
// architecture of the nodes its pod lands on: the helper image, which the
// runner picks by a rule of its own, and what recent job pods show.
package nodearch

import (
	"fmt"
	"runtime"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ID names the check.
const ID = "node-arch"

// ArchLabel is the node label the kubelet sets and node_selector uses
// (api.LabelArchStable in the executor).
const ArchLabel = corev1.LabelArchStable

var Check = &checks.Check{
	ID:       ID,
	Title:    "The job's images match the architecture of the nodes it runs on",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The Kubernetes executor picks its helper image for linux/amd64 unless node_selector names a " +
			"kubernetes.io/arch, or helper_image_autoset_arch_and_os is set, which picks the runner's own architecture " +
			"(executors/kubernetes/kubernetes.go prepareHelperImage and retrieveHelperImageConfig, v19.3.0). A cluster " +
			"that rents arm64 nodes (or a mix) then starts the amd64 helper on an arm64 node, and the container dies at " +
			"its first instruction; the build image can be wrong the same way. doctor compares the helper's architecture " +
			"with the kubernetes.io/arch of the nodes the node_selector admits, and reads recent job pods for the failure. " +
			"It does not read the build image's manifest list from its registry.",
		// The job pod's restartPolicy is Never (executors/kubernetes/kubernetes.go,
		// v19.3.0), and by default its first container is init-permissions, on
		// the helper image (buildInitContainers): a helper of the wrong
		// architecture fails there, the pod fails, and waitForPodRunning's
		// isRunning returns "pod status is failed" (executors/kubernetes/util.go,
		// v19.3.0), under "waiting for pod running: %w" (waitForPod), no
		// BuildError. A container the kubelet restarts instead reaches
		// CrashLoopBackOff: fmt.Errorf("container %q is in CrashLoopBackOff: %s")
		// in a BuildError{ConfigurationError} ("Job failed:"), whose message ends
		// in the last termination's "exec format error" (internal/watchers/pod.go,
		// crashLoopMessage). The exec into a helper that never started reads
		// container not found.
		Symptom: `ERROR: Job failed (system failure): prepare environment: waiting for pod running: pod status is failed` + checks.PrepareHint +
			` (init-permissions, on the helper image, could not start); or ERROR: Job failed: prepare environment: waiting for pod running: ` +
			`container "…" is in CrashLoopBackOff: back-off 10s restarting failed container=…: exec format error` + checks.PrepareHint +
			`; or unable to upgrade connection: container not found ("helper")`,
		Fix: checks.Steps{
			checks.Say("Pin the jobs to the architecture their images are built for (the helper follows that label), in the runner's [[runners]] entry; arm64 when the cluster rents only arm64 nodes:"),
			checks.Toml("[runners.kubernetes.node_selector]\n\"kubernetes.io/arch\" = \"amd64\""),
		},
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl + ` get nodes -L kubernetes.io/arch
sudo grep -A3 'node_selector' "$RUNNER_CONFIG"`)),
		Patterns: []string{
			// executors/kubernetes/internal/watchers/pod.go, v19.3.0 (crashLoopMessage).
			`container "*" is in CrashLoopBackOff: *exec format error`,
			"exec format error",
			// the kubelet's answer to an exec into the helper that is not running.
			`container not found ("helper")`,
		},
	},
	Requires:  []checks.Node{cluster.ListsFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run: func(p *checks.Pass) error {
		l := cluster.ListsFact.Get(p)
		if err := l.Err("nodes"); err != nil {
			return err
		}
		e := configfacts.RunnerEntryFact.Get(p)
		live := p.Env.Root == "" || p.Env.Root == "/"
		return judge(p, e, HelperArch(e.Kube(), live), l.Nodes, l.RunnerPods)
	},
}

// Helper is the helper image's architecture and why.
type Helper struct {
	Arch string // "" when doctor cannot tell
	Why  string
}

// HelperArch follows the executor: the amd64 default, the runner's own
// architecture with helper_image_autoset_arch_and_os, and node_selector's
// kubernetes.io/arch over both (kubernetes.go prepareHelperImage, v19.3.0).
// A helper_image of the operator's own is whatever its manifest says.
func HelperArch(k *runnerconfig.Kubernetes, live bool) Helper {
	if a := k.NodeSelector[ArchLabel]; a != "" {
		return Helper{a, fmt.Sprintf("node_selector %s = %q picks the helper image for it", ArchLabel, a)}
	}
	if k.HelperImage != "" {
		return Helper{"", fmt.Sprintf("helper_image = %q is the operator's own: its manifest decides", k.HelperImage)}
	}
	if k.HelperImageAutosetArchAndOS {
		if live {
			return Helper{runtime.GOARCH, "helper_image_autoset_arch_and_os = true picks the runner's own architecture, this host's " + runtime.GOARCH}
		}
		return Helper{"", "helper_image_autoset_arch_and_os = true picks the runner's own architecture, which a saved root does not show"}
	}
	return Helper{"amd64", "the executor's default: no node_selector " + ArchLabel + " and no helper_image_autoset_arch_and_os"}
}

// NodeArch is a node's architecture: its label, else what the kubelet reports.
func NodeArch(n *corev1.Node) string {
	if a := n.Labels[ArchLabel]; a != "" {
		return a
	}
	return n.Status.NodeInfo.Architecture
}

func judge(p *checks.Pass, e *configfacts.RunnerEntry, h Helper, nodes []corev1.Node, pods []corev1.Pod) error {
	label, sel := e.Label(), e.Kube().NodeSelector
	src, line := e.At("kubernetes", "node_selector")
	admitted, archs := admittedBy(nodes, sel)
	failed := execFormatFailures(pods)

	var mismatched []string
	if h.Arch != "" {
		for _, n := range admitted {
			if a := NodeArch(n); a != "" && a != h.Arch {
				mismatched = append(mismatched, n.Name+" ("+a+")")
			}
		}
	}
	nodeEv := checks.Evidence{Source: "GET /api/v1/nodes", Detail: fmt.Sprintf("%d of %s admitted by the node_selector; architectures: %s",
		len(admitted), checks.Count(len(nodes), "node", "nodes"), archList(archs))}
	selEv := checks.Evidence{Source: src, Detail: orNone(line, "no node_selector")}
	switch {
	case len(mismatched) > 0:
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the helper image is linux/%s (%s), but the job pod may land on %s: there the helper dies with "+
				"`exec format error` and the runner reports `container not found (\"helper\")`.", label, h.Arch, h.Why, strings.Join(mismatched, ", ")),
			Evidence: append([]checks.Evidence{selEv, nodeEv}, failed...),
			Fix:      pinFix(h.Arch, archs),
		})
	case len(failed) > 0:
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: a recent job pod's container died with `exec format error`: its image is built for another "+
				"architecture than the node it ran on (%s). The helper is %s.", label, archList(archs), helperWords(h)),
			Evidence: append([]checks.Evidence{selEv, nodeEv}, failed...),
			Fix: checks.Steps{
				checks.Say("Build the job's image for the nodes' architecture, a multi-arch manifest (IMAGE: its name; in the directory of its Dockerfile):"),
				checks.Sh("IMAGE=registry.example.com/ci/job:latest\ndocker buildx build --platform linux/amd64,linux/arm64 -t \"$IMAGE\" --push ."),
				checks.Say("Or pin the jobs in the runner's [[runners]] entry with [runners.kubernetes.node_selector] \"kubernetes.io/arch\"."),
			},
		})
	case sel[ArchLabel] != "" && len(nodes) > 0 && len(archs[sel[ArchLabel]]) == 0:
		p.Report(checks.Finding{Severity: checks.Warning,
			Cause: fmt.Sprintf("%s: node_selector %s = %q matches no node (the cluster has %s: %s): job pods stay Pending until the "+
				"cluster rents a %s node.", label, ArchLabel, sel[ArchLabel], checks.Count(len(nodes), "node", "nodes"), archList(archs), sel[ArchLabel]),
			Evidence: []checks.Evidence{selEv, nodeEv},
			Fix:      checks.Text(fmt.Sprintf("Rent %s nodes, or set node_selector %s to one of %s.", sel[ArchLabel], ArchLabel, archList(archs))),
		})
	}
	return nil
}

// admittedBy is the nodes whose labels satisfy every node_selector entry
// (the arch entry too), and the architecture of every node, by arch.
func admittedBy(nodes []corev1.Node, sel map[string]string) ([]*corev1.Node, map[string][]string) {
	var out []*corev1.Node
	archs := map[string][]string{}
	for i := range nodes {
		n := &nodes[i]
		if a := NodeArch(n); a != "" {
			archs[a] = append(archs[a], n.Name)
		}
		ok := true
		for k, v := range sel {
			if n.Labels[k] != v && !(k == ArchLabel && NodeArch(n) == v) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, n)
		}
	}
	return out, archs
}

// execFormatFailures are the runner namespace's containers that died of
// it, as evidence: the last termination or the current one.
func execFormatFailures(pods []corev1.Pod) []checks.Evidence {
	var ev []checks.Evidence
	for i := range pods {
		pod := &pods[i]
		if !cluster.IsJobPod(pod) {
			continue
		}
		for _, s := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			for _, t := range []*corev1.ContainerStateTerminated{s.State.Terminated, s.LastTerminationState.Terminated} {
				// A terminated message is a log tail: what is kept of it
				// (keep.Terminated) says only whether it is this.
				if t != nil && keep.Terminated(t.Message) != "" {
					ev = append(ev, checks.Evidence{Source: "GET /api/v1/namespaces/" + pod.Namespace + "/pods/" + pod.Name,
						Detail: fmt.Sprintf("container %q (image %s) on node %s: %s", s.Name, s.Image, orNone(pod.Spec.NodeName, "no node"), keep.Terminated(t.Message))})
					break
				}
			}
			if len(ev) >= 5 {
				return ev
			}
		}
	}
	return ev
}

func pinFix(helper string, archs map[string][]string) checks.Steps {
	if len(archs[helper]) == 0 {
		// No node of the helper's architecture: pin to what the cluster rents.
		var only string
		for a := range archs {
			only = a
		}
		if len(archs) == 1 {
			return checks.Steps{
				checks.Say(fmt.Sprintf("Every node is %s: pin the jobs to it in the runner's [[runners]] entry, which also picks the %s helper image, "+
					"use %s build images, and restart the runner:", only, only, only)),
				NodeSelector(only),
			}
		}
	}
	return checks.Steps{
		checks.Say(fmt.Sprintf("Keep the jobs on %s nodes (the helper follows that label) in the runner's [[runners]] entry, and restart the runner:", helper)),
		NodeSelector(helper),
	}
}

// NodeSelector is the config.toml table that pins a runner's job pods to
// one architecture: the key kubernetes.io/arch, which the encoder quotes
// (a dot and a slash make it no bare key), and arch, a node's label or
// config.toml's, as a TOML string whatever it holds.
func NodeSelector(arch string) checks.Step {
	return checks.Document(fixcode.TOML(fixcode.TOMLTable("runners.kubernetes.node_selector", fixcode.KV{Key: ArchLabel, Value: arch})))
}

func helperWords(h Helper) string {
	if h.Arch == "" {
		return "of unknown architecture: " + h.Why
	}
	return "linux/" + h.Arch + " (" + h.Why + ")"
}

func archList(archs map[string][]string) string {
	if len(archs) == 0 {
		return "none reported"
	}
	var s []string
	for a, ns := range archs {
		s = append(s, fmt.Sprintf("%s: %s", a, strings.Join(ns, ", ")))
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}
