package execupgrade

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// ProbeImageSetting is the image of the --deep probe pod.
var ProbeImageSetting = &checks.Setting{Name: "probe-image", Default: "busybox:1.36",
	Usage: "run the --deep probe pod from `IMAGE` (default busybox:1.36)"}

// DeepLabel marks the probe pods --deep creates, so an operator can find
// and delete any that a killed doctor left (they also end themselves).
const DeepLabel = "app.kubernetes.io/managed-by=gitlab-runner-doctor"

// deep is the only mutating probe: a tiny pod in the runner namespace, an
// exec of `true` through the full path with client-go's real SPDY executor
// (what the runner uses), and the pod deleted however the run ends.
func deep(p *checks.Pass, api *kubefacts.APIClient, ns string) error {
	name := "doctor-exec-probe-" + suffix()
	pods := api.Client.CoreV1().Pods(ns)
	// Registered before the create: an undo must exist even if the create
	// succeeds just as the deadline or Ctrl-C ends the run.
	p.Cleanup("delete pod "+ns+"/"+name, func(ctx context.Context) error {
		zero := int64(0)
		err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err := p.Context.Err(); err != nil {
		return err
	}
	if _, err := pods.Create(p.Context, probePod(name, ProbeImageSetting.Value(p.Env)), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("--deep: creating probe pod %s/%s: %w", ns, name, err)
	}
	if err := waitRunning(p.Context, api, ns, name); err != nil {
		var ended *podEnded
		if errors.As(err, &ended) {
			return fmt.Errorf("--deep: probe pod %s/%s: %w", ns, name, err)
		}
		return fmt.Errorf("--deep: probe pod %s/%s: %w (a cluster at zero nodes must rent one first; see pending-no-node)", ns, name, err)
	}
	u, err := ExecURL(api.Config, ns, name, "true")
	if err != nil {
		return err
	}
	u.RawQuery += "&container=probe"
	exec, err := remotecommand.NewSPDYExecutor(api.Config, "POST", u)
	if err != nil {
		return err
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(p.Context, 30*time.Second)
	defer cancel()
	start := time.Now()
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: limit(&stdout), Stderr: limit(&stderr)})
	if err != nil {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("--deep: exec of `true` in the probe pod %s/%s through the full path failed after %s: %v. This is what every job's attach meets.",
				ns, name, time.Since(start).Round(time.Millisecond), err),
			Evidence: []checks.Evidence{{Source: "POST " + u.Path, Detail: fmt.Sprintf("SPDY executor: %v; stderr: %q", err, stderr.String())}},
		})
	}
	return nil
}

func probePod(name, image string) *corev1.Pod {
	deadline, grace := int64(600), int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "gitlab-runner-doctor"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         &deadline, // a pod a killed doctor left ends itself
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "probe", Image: image, Command: []string{"sleep", "600"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
				}},
			}},
		},
	}
}

// waitRunning polls the pod until Running, or the context ends. A pod
// that has ended (Failed: its image would not run, its node evicted it;
// Succeeded: it exited) can never be Running: that is said at once, not
// after waiting out the deadline, and the cleanup deletes it.
func waitRunning(ctx context.Context, api *kubefacts.APIClient, ns, name string) error {
	var last string
	for {
		pod, err := api.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			switch pod.Status.Phase {
			case corev1.PodRunning:
				return nil
			case corev1.PodFailed, corev1.PodSucceeded:
				return &podEnded{phase: pod.Status.Phase, why: endedWhy(pod)}
			}
			last = string(pod.Status.Phase)
			for _, cs := range pod.Status.ContainerStatuses {
				if cs.State.Waiting != nil {
					last += " (" + cs.State.Waiting.Reason + ")"
				}
			}
			if pod.Spec.NodeName == "" {
				last += ", no node yet"
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not Running before the deadline: %s", last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// podEnded is a probe pod that ended before it ran: waiting longer, or
// renting a node, would not help.
type podEnded struct {
	phase corev1.PodPhase
	why   string
}

func (e *podEnded) Error() string { return fmt.Sprintf("ended %s before it ran%s", e.phase, e.why) }

// endedWhy is what the pod's status says of its end: the reason and
// message of the pod, and of each container that terminated.
func endedWhy(pod *corev1.Pod) string {
	var why []string
	if pod.Status.Reason != "" || pod.Status.Message != "" {
		why = append(why, strings.TrimSpace(keep.Reason(pod.Status.Reason)+" "+keep.Message(pod.Status.Message)))
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			why = append(why, fmt.Sprintf("container %s exited %d (%s)", cs.Name, t.ExitCode, t.Reason))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return ": " + redact.Text(strings.Join(why, "; "))
}

func suffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// limitedWriter keeps at most 4 KiB of a stream: evidence, not a log.
type limitedWriter struct{ b *bytes.Buffer }

func limit(b *bytes.Buffer) *limitedWriter { return &limitedWriter{b} }

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := 4<<10 - w.b.Len(); room > 0 {
		if len(p) > room {
			w.b.Write(p[:room])
		} else {
			w.b.Write(p)
		}
	}
	return len(p), nil
}
