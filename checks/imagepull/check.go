// Package imagepull finds job containers that cannot pull their image.
package imagepull

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
)

var Check = &checks.Check{
	ID:       "image-pull",
	Title:    "Job containers pull their images",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "After a node boots, the job's image does not exist, its name is invalid, or the rented node cannot " +
			"reach its registry (a rented node's egress is the provider's, not the operator's).",
		// executors/kubernetes/internal/pull/errors.go, v19.3.0 (ImagePullError): "pulling image %q for container %s: %s".
		Symptom: "ERROR: Job failed: prepare environment: waiting for pod running: pulling image \"…\" for container build: image pull failed: Back-off pulling image \"…\"" + checks.PrepareHint,
		Fix: checks.Text("Correct the image name in .gitlab-ci.yml or [runners.kubernetes] image, or use a registry the rented nodes reach; " +
			"a request to the registry from a node before a job runs saves a node boot."),
		Verify: checks.Target(checks.Say("Each job pod's waiting reason:"),
			checks.Sh(checks.CatalogKubectl+` get pods -n "$RUNNER_NAMESPACE" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.containerStatuses[*].state.waiting.reason}{"\n"}{end}'`)),
		Patterns: []string{
			// executors/kubernetes/internal/watchers/pod.go, v19.3.0: fmt.Sprintf("image pull failed: %s",
			// waiting.Message) for ErrImagePull, ImagePullBackOff and InvalidImageName.
			"image pull failed: ",
			// pkg/kubelet/images/image_manager.go, v1.37.2: the kubelet's events, which the runner prints
			// as "Event retrieved from the cluster: %s" (executors/kubernetes/kubernetes.go, v19.3.0).
			"Failed to pull image \"",
			"Back-off pulling image \"",
		},
	},
	Requires:  []checks.Node{cluster.ListsFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

var pullFailures = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true}

func run(p *checks.Pass) error {
	l := cluster.ListsFact.Get(p)
	if err := l.Err("runner pods"); err != nil {
		return err
	}
	for i := range l.RunnerPods {
		pod := &l.RunnerPods[i]
		if !cluster.IsJobPod(pod) {
			continue
		}
		var ev []checks.Evidence
		var first string
		statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
		for _, cs := range statuses {
			w := cs.State.Waiting
			if w == nil || !pullFailures[w.Reason] {
				continue
			}
			if first == "" {
				first = cs.Image
			}
			ev = append(ev, checks.Evidence{
				Source: fmt.Sprintf("pod %s/%s container %s", pod.Namespace, pod.Name, cs.Name),
				Detail: fmt.Sprintf("%s: image %s: %s", w.Reason, cs.Image, keep.Message(w.Message)),
			})
		}
		if len(ev) > 0 {
			p.Report(checks.Finding{
				Cause:    fmt.Sprintf("Job pod %s/%s cannot pull %s: the image does not exist, or the node cannot reach its registry.", pod.Namespace, pod.Name, first),
				Evidence: ev,
			})
		}
	}
	return nil
}
