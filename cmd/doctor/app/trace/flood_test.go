package trace

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/socialwebcomputer/doctor/checks/client/kube/kubefake"
)

// verdictText is everything a verdict says: pod, reason, detail and each
// stage's detail.
func verdictText(v *Verdict) string {
	s := v.Pod + "\n" + v.Reason + "\n" + v.Detail
	for _, st := range v.Timeline {
		s += "\n" + st.Detail
	}
	return s
}

// TestMachineVerdictIsAboutThePodAlone: under a flood of events about other
// pods (the namespace's pods, a new pod of another runner, and an earlier
// pod of the same name whose events carry no UID, as some components
// write them), the verdict of a followed pod that fails before it ran
// names that pod and its own events alone, and its scale decision, sent
// before the pod's ADDED reached the trace, survives the flood.
func TestMachineVerdictIsAboutThePodAlone(t *testing.T) {
	for _, next := range []bool{true, false} {
		t.Run(fmt.Sprintf("next=%v", next), func(t *testing.T) {
			ours := mkJobPod("runner-abc123-project-5-concurrent-0-ours", at(10*time.Second))
			o := Options{Namespace: "gitlab-runner", Next: next, RunnerName: "kcp-tenant-kubernetes"}
			if !next {
				o.Pod = ours.Name
			}
			m := newMachine(o, t0)
			pre := mkJobPod("runner-abc123-project-5-concurrent-1-pre", at(-time.Hour))
			m.initNodes(t0, nil, true)
			m.initEvents(t0, nil, true)
			m.initPods(t0, []corev1.Pod{*pre})
			other := mkJobPod("runner-abc123-project-5-concurrent-2-other", at(5*time.Second))
			other.Labels[LabelManagerName] = "another-runner"
			m.apply(at(5*time.Second), item{kind: kindPods, typ: watch.Added, obj: other})
			// The pod of the same name before this one: deleted, its events
			// left behind without a UID.
			earlier := ours.DeepCopy()
			earlier.UID = ""

			// The scale decision about ours reaches the trace before its pod.
			m.apply(at(11*time.Second), item{kind: kindEvents, typ: watch.Added,
				obj: mkEvent(ours, "Normal", "TriggeredScaleUp", "pod triggered scale-up: ours", "cluster-autoscaler", "", at(11*time.Second))})
			for i := range 3 * maxBuffered {
				now := at(11*time.Second + time.Duration(i)*time.Millisecond)
				for _, p := range []*corev1.Pod{pre, other} {
					m.apply(now, item{kind: kindEvents, typ: watch.Added,
						obj: mkEvent(p, "Warning", "FailedScheduling", "OTHER "+p.Name, "default-scheduler", "", now)})
				}
				ev := mkEvent(earlier, "Warning", "BackOff", "EARLIER pod of the same name", "kubelet", "", at(time.Duration(i)*time.Millisecond))
				m.apply(now, item{kind: kindEvents, typ: watch.Added, obj: ev})
			}
			// A relist of the events after 410 Gone, page by page, floods too.
			var page []runtime.Object
			for i := range eventPageSize {
				page = append(page, mkEvent(other, "Warning", "FailedScheduling", fmt.Sprintf("OTHER %d", i), "default-scheduler", "", at(12*time.Second)))
			}
			m.apply(at(12*time.Second), item{kind: kindEvents, typ: itemRelist, list: page})

			m.apply(at(13*time.Second), item{kind: kindPods, typ: watch.Added, obj: ours.DeepCopy()})
			m.apply(at(14*time.Second), item{kind: kindEvents, typ: watch.Added,
				obj: mkEvent(ours, "Warning", "FailedScheduling", "ours: 0/0 nodes are available", "default-scheduler", "", at(14*time.Second))})
			// The earlier pod's last event, written late (its time is its own).
			m.apply(at(14500*time.Millisecond), item{kind: kindEvents, typ: watch.Added,
				obj: mkEvent(earlier, "Warning", "BackOff", "EARLIER pod of the same name, last", "kubelet", "", at(9*time.Second))})
			failed := ours.DeepCopy()
			failed.Status.Phase, failed.Status.Reason, failed.Status.Message = corev1.PodFailed, "Evicted", "ours was evicted"
			m.apply(at(15*time.Second), item{kind: kindPods, typ: watch.Modified, obj: failed})

			v := m.end
			if v == nil || v.Completed || v.Pod != ours.Name || v.Stuck != StageNodeJoined {
				t.Fatalf("verdict %+v; want %s stuck in node-joined", v, ours.Name)
			}
			text := verdictText(v)
			for _, not := range []string{"OTHER", "EARLIER", "-pre", "-other"} {
				if strings.Contains(text, not) {
					t.Errorf("the verdict says %q, of another pod:\n%s", not, text)
				}
			}
			for _, says := range []string{"ours was evicted", "pod triggered scale-up: ours"} {
				if !strings.Contains(text, says) {
					t.Errorf("the verdict does not say %q:\n%s", says, text)
				}
			}
			if len(m.buffered) > maxBuffered {
				t.Errorf("%d events buffered, past %d", len(m.buffered), maxBuffered)
			}
		})
	}
}

// An event without a UID from the pod's own lifetime is still the pod's.
func TestMachineEventWithoutUID(t *testing.T) {
	m := newMachine(Options{Namespace: "gitlab-runner", Pod: "runner-abc123-project-5-concurrent-0-u"}, t0)
	p := mkJobPod("runner-abc123-project-5-concurrent-0-u", at(10*time.Second))
	m.initPods(t0, []corev1.Pod{*p})
	for _, c := range []struct {
		uid  types.UID
		when time.Time
		want bool
	}{
		{p.UID, at(time.Second), true}, // its UID: whenever it says it is from
		{"uid-another", at(20 * time.Second), false},
		{"", at(10*time.Second + 500*time.Millisecond), true}, // the second of its creation
		{"", at(20 * time.Second), true},
		{"", at(9 * time.Second), false}, // before it was created: an earlier pod's
	} {
		q := p.DeepCopy()
		q.UID = c.uid
		if got := m.about(mkEvent(q, "Normal", "Scheduled", "x", "default-scheduler", "", c.when)); got != c.want {
			t.Errorf("uid %q at %s: about %v, want %v", c.uid, c.when, got, c.want)
		}
	}
}

// pagedEvents is an events list of n events served as an apiserver does:
// Limit per page, a continue token, the list's resourceVersion; it records
// each request's limit.
func pagedEvents(n int, limits *[]int64) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	p := mkJobPod("runner-abc123-project-5-concurrent-0-flooded", t0)
	return func(_ context.Context, lo metav1.ListOptions) (runtime.Object, error) {
		*limits = append(*limits, lo.Limit)
		from, _ := strconv.Atoi(lo.Continue)
		l := &corev1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "4242"}}
		to := n
		if lo.Limit > 0 {
			to = min(n, from+int(lo.Limit))
		}
		for i := from; i < to; i++ {
			l.Items = append(l.Items, *mkEvent(p, "Warning", "BackOff", fmt.Sprint(i), "kubelet", "", at(time.Duration(i)*time.Millisecond)))
		}
		if to < n {
			l.Continue = strconv.Itoa(to)
		}
		return l, nil
	}
}

// A flood of events is never held whole: the first list of Next reads one
// event (for the resourceVersion), that of Pod keeps the newest
// maxBuffered as pages come, oldest first, and a relist after 410 Gone is
// handed on a page of eventPageSize at a time.
func TestEventListsAreBounded(t *testing.T) {
	const n = 5000
	newEvents := func(limits *[]int64) *stream {
		s := newStreams(kubefake.Wrap(fake.NewClientset()), Options{Namespace: "gitlab-runner", Next: true, RequestTimeout: time.Second})[kindEvents]
		s.list = pagedEvents(n, limits)
		return s
	}

	var limits []int64
	objs, rv, err := firstList(context.Background(), newEvents(&limits), Options{Next: true})
	if err != nil || rv != "4242" || len(objs) != 0 || fmt.Sprint(limits) != "[1]" {
		t.Errorf("Next's first list: %d events, rv %q, %v, limits %v; want none, rv 4242, one request of limit 1", len(objs), rv, err, limits)
	}

	limits = nil
	objs, rv, err = firstList(context.Background(), newEvents(&limits), Options{Pod: "runner-abc123-project-5-concurrent-0-flooded"})
	if err != nil || rv != "4242" || len(objs) != maxBuffered || len(limits) != n/eventPageSize {
		t.Fatalf("Pod's first list: %d events, rv %q, %v, %d requests", len(objs), rv, err, len(limits))
	}
	if first, last := objs[0].(*corev1.Event).Message, objs[len(objs)-1].(*corev1.Event).Message; first != fmt.Sprint(n-maxBuffered) || last != fmt.Sprint(n-1) {
		t.Errorf("kept %s to %s, want the newest %d, oldest first", first, last, maxBuffered)
	}

	limits = nil
	out := make(chan item, n)
	rv, err = newEvents(&limits).listAgain(context.Background(), out)
	close(out)
	total := 0
	for it := range out {
		if it.typ != itemRelist || len(it.list) > eventPageSize {
			t.Fatalf("a relist item of %d events (%s), want pages of at most %d", len(it.list), it.typ, eventPageSize)
		}
		total += len(it.list)
	}
	if err != nil || rv != "4242" || total != n {
		t.Errorf("relist: %d events, rv %q, %v", total, rv, err)
	}
}
