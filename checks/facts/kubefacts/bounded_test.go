package kubefacts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/internal/hostio"
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
	api, err := NewAPI(&hostio.Env{Root: t.TempDir()}, &rest.Config{Host: srv.URL})
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

// -v 6 logs each API request with its status and latency, -v 8 its headers
// too, with the credential left out.
func TestAPIRequestsAreLoggedRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","items":[]}`))
	}))
	defer srv.Close()
	var lines []string
	env := &hostio.Env{Root: t.TempDir(), Log: func(level int, format string, args ...any) {
		if level <= 8 {
			lines = append(lines, fmt.Sprintf(format, args...))
		}
	}}
	api, err := NewAPI(env, &rest.Config{Host: srv.URL, BearerToken: "sekret-bearer-token-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "GET "+srv.URL+"/api/v1/nodes -> 200 OK in ") {
		t.Errorf("no request line:\n%s", all)
	}
	if strings.Contains(all, "sekret-bearer-token") || !strings.Contains(all, "Authorization: <") {
		t.Errorf("the credential is logged, or its header is not described:\n%s", all)
	}
}

// A 401 with a body without end is still a 401: the error body is cut at
// MaxErrorBodyBytes without an error, so client-go reports the status (and
// api-auth classifies it) instead of a failed read.
func TestHugeErrorBodyKeepsItsStatus(t *testing.T) {
	chunk := []byte(strings.Repeat("A", 64<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","message":"`))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	api, err := NewAPI(&hostio.Env{Root: t.TempDir()}, &rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("err %v, want a 401", err)
	}
}

// A header block past MaxHeaderBytes is an error, not 10 MB of header.
func TestHugeHeaderIsRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", strings.Repeat("A", 1<<20))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NodeList","apiVersion":"v1","items":[]}`))
	}))
	defer srv.Close()
	api, err := NewAPI(&hostio.Env{Root: t.TempDir()}, &rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "headers exceeded") {
		t.Fatalf("err %v, want the header bound's", err)
	}
}

// Bodies read at once are bounded together: two open bodies that hold
// MaxInFlightBytes between them stop the next read; closing gives it back.
func TestInFlightBound(t *testing.T) {
	body := func() *boundedBody {
		return &boundedBody{rc: io.NopCloser(strings.NewReader(strings.Repeat("x", MaxInFlightBytes/2+1))), url: "u"}
	}
	a, b := body(), body()
	if _, err := io.ReadAll(a); err != nil {
		t.Fatal(err)
	}
	_, err := io.ReadAll(b)
	var tooLarge *ErrBodyTooLarge
	if !errors.As(err, &tooLarge) || !tooLarge.InFlight {
		t.Fatalf("second body: %v, want the in-flight bound", err)
	}
	a.Close()
	b.Close()
	if _, err := io.ReadAll(body()); err != nil {
		t.Errorf("after both closed: %v", err)
	}
}
