package keep

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStringsEventsConditionsBounded: live (protobuf) and recorded (JSON)
// alike, a kept string past MaxString fails its answer, and the run's
// events past MaxEvents and conditions past MaxConditions fail the answer
// that passes them; what failed is given back, so the next answer counts
// from where the run was.
func TestStringsEventsConditionsBounded(t *testing.T) {
	long := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("n", MaxString+1)}}
	for _, media := range []string{mediaProto, mediaJSON} {
		_, err := cutOf(encode(t, long, media), media, Request{URL: "test", Run: &Run{}})
		var much *ErrTooMuch
		if !errors.As(err, &much) || much.What != "string" || !strings.Contains(err.Error(), "a string of more than 65536 bytes") {
			t.Errorf("%s: a %d-byte name: %v", media, MaxString+1, err)
		}
	}
	page := &corev1.EventList{}
	for i := range 1000 {
		page.Items = append(page.Items, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("e", i)}, Message: "m"})
	}
	pod := &corev1.Pod{}
	for range 10_000 {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: "Ready"})
	}
	for _, media := range []string{mediaProto, mediaJSON} {
		run := &Run{}
		var err error
		for i := 0; err == nil && i <= MaxEvents/1000; i++ {
			_, err = cutOf(encode(t, page, media), media, Request{URL: "test", Limit: 1000, Run: run})
		}
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d events", MaxEvents)) {
			t.Errorf("%s: %d events: %v", media, MaxEvents+1000, err)
		}
		if n := run.counts[eventsBudget].Load(); n != MaxEvents {
			t.Errorf("%s: the run counts %d events after the failed page, want %d", media, n, MaxEvents)
		}
		run, err = &Run{}, nil
		for i := 0; err == nil && i <= MaxConditions/10_000; i++ {
			_, err = cutOf(encode(t, pod, media), media, Request{URL: "test", Run: run})
		}
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d conditions", MaxConditions)) {
			t.Errorf("%s: %d conditions: %v", media, MaxConditions+10_000, err)
		}
	}
}
