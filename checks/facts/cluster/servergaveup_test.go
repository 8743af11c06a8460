package cluster

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// The apiserver's timeout filter ends a request whose handler has begun
// its answer by panicking with http.ErrAbortHandler, which an HTTP/2
// server turns into a stream reset (k8s.io/apiserver
// pkg/server/filters/timeout.go, v0.37.2). The server here does exactly
// that over TLS with HTTP/2, and client-go's own transport receives it:
// the error it returns is what ServerEndedIt must recognise.
func TestServerEndedItOnAStreamReset(t *testing.T) {
	const serverTimeout = 300 * time.Millisecond
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(serverTimeout)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	api, err := kubefacts.NewAPI(&hostio.Env{Root: t.TempDir()}, &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ci", GenerateName: "runner-"}}
	start := time.Now()
	err = DryRunCreate(ctx, api, pod, serverTimeout)
	if err == nil {
		t.Fatal("a reset stream gave no error")
	}
	if !ServerEndedIt(err, time.Since(start), serverTimeout, ctx.Err()) {
		t.Errorf("a stream reset after the server's timeout is not recognised as the apiserver ending the request: %T %v", errors.Unwrap(err), err)
	}
	// The same error before the timeout could have passed is a broken
	// connection, not the apiserver's timeout.
	if ServerEndedIt(err, serverTimeout/2, serverTimeout, nil) {
		t.Error("a reset before the server's timeout counted as the apiserver's timeout")
	}
	if ServerEndedIt(err, time.Since(start), serverTimeout, context.DeadlineExceeded) {
		t.Error("doctor's own deadline counted as the apiserver's timeout")
	}
}

func TestServerEndedItOnTheTimeoutStatus(t *testing.T) {
	// The 504 of the same filter: "request did not complete within requested timeout".
	err := apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
	if !ServerEndedIt(err, time.Millisecond, time.Second, nil) {
		t.Error("the 504 timeout status is not the apiserver's timeout")
	}
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errors.New("no"))
	if ServerEndedIt(refused, time.Hour, time.Second, nil) {
		t.Error("a refusal counted as a timeout")
	}
}
