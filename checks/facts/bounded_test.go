package facts

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks"
)

// An apiserver whose answer never ends is an error, not memory: client-go
// reads whole bodies, and the bounded door stops it at MaxResponseBytes.
func TestEndlessBodyIsBounded(t *testing.T) {
	chunk := []byte(strings.Repeat("x", 64<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	api, err := NewAPI(&checks.Env{Root: t.TempDir()}, &rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = api.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	runtime.ReadMemStats(&after)
	var tooLarge *ErrBodyTooLarge
	if !errors.As(err, &tooLarge) && (err == nil || !strings.Contains(err.Error(), "larger than")) {
		t.Fatalf("endless body: err %v, want the bound's error", err)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4*MaxResponseBytes {
		t.Errorf("heap grew by %d MiB reading an endless body", grew>>20)
	}
}
