package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// TestPagesAsksAgainInQuarters: a page past the per-response bound (fat
// objects) is asked again at a quarter of the size, once, from the same
// continue token, and the list completes; a bound of the run or of the
// bodies in flight is not a page's size, so it ends the list.
func TestPagesAsksAgainInQuarters(t *testing.T) {
	const objects, fits = 2300, 300 // a page of more than 300 is too large
	var limits []int64
	got := 0
	list := func(o metav1.ListOptions) (string, error) {
		limits = append(limits, o.Limit)
		if o.Limit > fits {
			return "", fmt.Errorf("reading: %w", &kubefacts.ErrBodyTooLarge{URL: "/api/v1/pods", Limit: kubefacts.MaxResponseBytes})
		}
		from := 0
		if o.Continue != "" {
			fmt.Sscan(o.Continue, &from)
		}
		to := min(from+int(o.Limit), objects)
		got += to - from
		if to == objects {
			return "", nil
		}
		return fmt.Sprint(to), nil
	}
	if err := pages(context.Background(), list, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if got != objects {
		t.Errorf("listed %d of %d", got, objects)
	}
	if limits[0] != PageSize || limits[1] != PageSize/4 {
		t.Errorf("limits asked %v, want %d then %d", limits[:2], PageSize, PageSize/4)
	}

	// Too large even in quarters (a hostile server's endless body): two
	// requests, then the error.
	n := 0
	err := pages(context.Background(), func(metav1.ListOptions) (string, error) {
		n++
		return "", &kubefacts.ErrBodyTooLarge{Limit: kubefacts.MaxResponseBytes}
	}, metav1.ListOptions{})
	if !errors.As(err, new(*kubefacts.ErrBodyTooLarge)) || n != 2 {
		t.Errorf("endless pages: %d requests, err %v; want 2 and the error", n, err)
	}

	for _, e := range []*kubefacts.ErrBodyTooLarge{{Run: true}, {InFlight: true}} {
		n := 0
		err := pages(context.Background(), func(metav1.ListOptions) (string, error) { n++; return "", e }, metav1.ListOptions{})
		if !errors.As(err, new(*kubefacts.ErrBodyTooLarge)) || n != 1 {
			t.Errorf("%+v: %d requests, err %v; want the one request's error", e, n, err)
		}
	}
}
