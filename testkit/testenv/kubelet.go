//go:build integration

package testenv

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
)

// FakeKubeletOutput is what a command exec'd through the fake kubelet
// prints on stdout.
const FakeKubeletOutput = "fake-kubelet: ok\n"

// FakeKubelet is an HTTPS server on 127.0.0.1 standing in for a node's
// kubelet on the exec path: the apiserver forwards pods/exec to
// <InternalIP>:<kubeletEndpoint.Port> of the pod's node, and this server
// answers the upgrade with apimachinery's real SPDY upgrader, so a
// 101 Switching Protocols seen by a client is the real one. After the
// upgrade it plays a command that prints FakeKubeletOutput and exits 0.
//
// It also serves GET /containerLogs/..., which the apiserver proxies
// pods/<pod>/log to, so a log read through the apiserver reaches it.
//
// Point a node at it with ReadyNodeStatus(cpu, mem, k.Port).
type FakeKubelet struct {
	Port int

	mu       sync.Mutex
	requests []string // "METHOD path", in arrival order
	stop     chan struct{}
}

// exec protocols a v1.37 kubelet speaks over SPDY, newest first.
var kubeletProtocols = []string{"v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"}

// StartFakeKubelet starts a fake kubelet with a serving certificate from
// the env's CA (the apiserver does not verify kubelets unless told to).
func (e *Env) StartFakeKubelet(t testing.TB) *FakeKubelet {
	t.Helper()
	certPEM, keyPEM := e.MintServing("127.0.0.1", "localhost")
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("testenv: fake kubelet cert: %v", err)
	}
	k := &FakeKubelet{stop: make(chan struct{})}
	srv := httptest.NewUnstartedServer(k)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	k.Port = srv.Listener.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() {
		close(k.stop) // ends upgraded connections, which srv.Close does not track
		srv.Close()
	})
	return k
}

// Requests returns the "METHOD path" of every request received so far.
func (k *FakeKubelet) Requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.requests...)
}

func (k *FakeKubelet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.requests = append(k.requests, r.Method+" "+r.URL.Path)
	k.mu.Unlock()
	if !httpstream.IsUpgradeRequest(r) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/containerLogs/") {
			serveLog(w, r)
			return
		}
		http.Error(w, "fake kubelet: only exec/attach upgrades and containerLogs are served", http.StatusNotFound)
		return
	}
	// Handshake negotiates X-Stream-Protocol-Version and sets it on the
	// response, as the kubelet does before upgrading (403 on mismatch).
	if _, err := httpstream.Handshake(r, w, kubeletProtocols); err != nil {
		return
	}
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, playCommand)
	if conn == nil {
		return // the upgrader has answered with an error
	}
	defer conn.Close()
	select {
	case <-conn.CloseChan():
	case <-k.stop:
	}
}

// FakeKubeletLog is the log of every container the fake kubelet serves.
const FakeKubeletLog = "fake-kubelet: log line\n"

// serveLog answers GET /containerLogs/<namespace>/<pod>/<container>, the
// path the apiserver proxies pods/<pod>/log to, honouring limitBytes as
// the kubelet does (pkg/kubelet/server/server.go getContainerLogs).
func serveLog(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		http.Error(w, "fake kubelet: want /containerLogs/<namespace>/<pod>/<container>", http.StatusBadRequest)
		return
	}
	out := FakeKubeletLog
	if v := r.URL.Query().Get("limitBytes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			http.Error(w, "fake kubelet: limitBytes must be a positive integer", http.StatusBadRequest)
			return
		}
		out = out[:min(n, len(out))]
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, out)
}

// playCommand handles each stream the client opens: stdout gets
// FakeKubeletOutput, stdin is drained, and closing the error stream with
// nothing written tells a v4 client the command exited 0.
func playCommand(s httpstream.Stream, replySent <-chan struct{}) error {
	go func() {
		<-replySent
		switch s.Headers().Get(corev1.StreamType) {
		case corev1.StreamTypeStdout:
			_, _ = io.WriteString(s, FakeKubeletOutput)
			s.Close()
		case corev1.StreamTypeStderr, corev1.StreamTypeError:
			s.Close()
		case corev1.StreamTypeStdin:
			_, _ = io.Copy(io.Discard, s)
		}
	}()
	return nil
}
