//go:build integration

package trace

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestTraceUnderAnEventFlood on a real apiserver: before the trace, a pod
// of the same name as the one it follows came and went, leaving events
// that carry no UID (as some components write them); while it runs, 2,400
// events about other pods and more of the earlier pod's arrive, the last
// after the followed pod's own warning, and the followed pod fails before
// it ran. Each says who it is about in a hole of a documented message (an
// image, a resource), which is what the cut keeps of a message. The verdict names the followed pod and its own events alone; with --next the trace
// reads none of the namespace's past events (one list of limit 1, for the
// resourceVersion).
func TestTraceUnderAnEventFlood(t *testing.T) {
	w := startWorld(t)
	for _, next := range []bool{true, false} {
		t.Run(fmt.Sprintf("next=%v", next), func(t *testing.T) {
			d := newDriver(t, w, fmt.Sprintf("flood-%v", next))
			pods := w.admin.CoreV1().Pods(d.ns)
			earlier, err := pods.Create(t.Context(), jobPodObject(d.ns, "x1y2z3"), metav1.CreateOptions{})
			d.check(err)
			earlierEvent := func(ctx context.Context, i int) error {
				old := metav1.NewTime(earlier.CreationTimestamp.Time)
				_, err := w.admin.CoreV1().Events(d.ns).Create(ctx, &corev1.Event{
					ObjectMeta:     metav1.ObjectMeta{Namespace: d.ns, Name: fmt.Sprintf("%s.earlier%d", earlier.Name, i)},
					InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: d.ns, Name: earlier.Name},
					Type:           "Warning", Reason: "BackOff", Message: `Back-off pulling image "earlier.invalid/pod:1"`,
					Source: corev1.EventSource{Component: "provider"}, FirstTimestamp: old, LastTimestamp: old, Count: 1,
				}, metav1.CreateOptions{})
				return err
			}
			for i := range 20 {
				d.check(earlierEvent(t.Context(), i))
			}
			d.check(pods.Delete(t.Context(), earlier.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
			time.Sleep(1100 * time.Millisecond) // the followed pod is created in a later second

			o := Options{Next: next, PollTimeout: time.Hour, Timeout: 60 * time.Second}
			if !next {
				o.Pod = earlier.Name
				d.steps()[0]()
			}
			done := d.start(t.Context(), o)
			if next {
				d.steps()[0]()
			}
			d.out.stage(StageCreated)
			if d.pod.Name != earlier.Name || d.pod.UID == earlier.UID {
				t.Fatalf("the followed pod %s/%s is not a new pod of the earlier one's name", d.pod.Name, d.pod.UID)
			}

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for i := 0; ctx.Err() == nil && i < 300; i++ {
						if i%10 == 0 {
							_ = earlierEvent(ctx, 1000*(g+1)+i)
						}
						name := fmt.Sprintf("runner-abc123-project-5-concurrent-1-other%d-%d", g, i)
						now := metav1.NewTime(time.Now())
						_, _ = w.admin.CoreV1().Events(d.ns).Create(ctx, &corev1.Event{
							ObjectMeta: metav1.ObjectMeta{Namespace: d.ns, Name: fmt.Sprintf("%s.%x", name, time.Now().UnixNano())},
							InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: d.ns, Name: name,
								UID: types.UID(fmt.Sprintf("uid-%d-%d", g, i))},
							Type: "Warning", Reason: "FailedScheduling", Message: "0/9 nodes are available: 9 Insufficient other.example/" + name + ".",
							Source: corev1.EventSource{Component: "default-scheduler"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
						}, metav1.CreateOptions{})
					}
				})
			}
			d.event("Warning", "FailedScheduling", "0/7 nodes are available: 7 Insufficient ours.example/cpu.", "default-scheduler", "")
			wg.Wait()
			d.check(earlierEvent(t.Context(), 99999))
			p, err := pods.Get(t.Context(), d.pod.Name, metav1.GetOptions{})
			d.check(err)
			p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: ours.example/evicted. "
			_, err = pods.UpdateStatus(t.Context(), p, metav1.UpdateOptions{})
			d.check(err)
			r := d.wait(done)
			if r.err != nil || r.v.Pod != d.pod.Name || r.v.Stuck != StageScaleDecision || !strings.Contains(r.v.Reason, "ours.example/evicted") ||
				!strings.Contains(r.v.Detail, "last warning FailedScheduling: 0/7 nodes are available: 7 Insufficient ours.example/cpu") {
				t.Fatalf("verdict %+v, %v; want %s stuck in scale-decision, evicted, its own last warning\n%s", r.v, r.err, d.pod.Name, d.out.dump())
			}
			for _, l := range d.out.drain() {
				if l.event() == "verdict" && (strings.Contains(l.text, "other.example") || strings.Contains(l.text, "earlier.invalid")) {
					t.Errorf("the verdict is about another pod: %s", l.text)
				}
			}
			if next {
				for _, e := range auditOf(t, w) {
					if e.Verb == "list" && e.ObjectRef.Resource == "events" && e.ObjectRef.Namespace == d.ns && !strings.Contains(e.RequestURI, "limit=1&") &&
						!strings.HasSuffix(e.RequestURI, "limit=1") {
						t.Errorf("with --next the trace listed the namespace's past events: %s", e.RequestURI)
					}
				}
			}
		})
	}
}
