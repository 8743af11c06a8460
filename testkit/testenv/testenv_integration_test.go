//go:build integration

package testenv_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

const did = "did:web:owner.test"

// statusCode returns the HTTP code of a client-go error (0 if none).
func statusCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return http.StatusOK
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("want *errors.StatusError, got %T: %v", err, err)
	}
	return int(se.ErrStatus.Code)
}

func listNodes(t *testing.T, cs kubernetes.Interface) int {
	t.Helper()
	_, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	return statusCode(t, err)
}

func kubeconfigClient(t *testing.T, path string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func TestIdentitiesAuditAndFront(t *testing.T) {
	env := testenv.Start(t)

	if v, err := env.Clientset().Discovery().ServerVersion(); err != nil || v.GitVersion != "v1.37.2" {
		t.Errorf("server version = %v, %v; want v1.37.2", v, err)
	}

	owner := filepath.Join(env.Dir, "owner.kubeconfig")
	env.OwnerKubeconfig(owner, did, time.Now().Add(time.Hour))
	ownerCS := kubeconfigClient(t, owner)
	if code := listNodes(t, ownerCS); code != http.StatusForbidden {
		t.Errorf("owner without binding: list nodes = %d, want 403", code)
	}

	env.BindOwnersToClusterAdmin()
	// RBAC reads bindings from an informer: allow it a moment.
	code := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if code = listNodes(t, ownerCS); code == http.StatusOK {
			break
		}
	}
	if code != http.StatusOK {
		t.Errorf("bound owner: list nodes = %d, want 200", code)
	}

	expired := filepath.Join(env.Dir, "expired.kubeconfig")
	env.OwnerKubeconfig(expired, did, time.Now().Add(-time.Minute))
	if code := listNodes(t, kubeconfigClient(t, expired)); code != http.StatusUnauthorized {
		t.Errorf("expired owner cert: list nodes = %d, want 401", code)
	}
	if code := listNodes(t, env.ClientsetFor(env.MintForeignClient(did, []string{testenv.OwnersGroup}))); code != http.StatusUnauthorized {
		t.Errorf("foreign-CA owner cert: list nodes = %d, want 401", code)
	}

	for _, want := range []int{http.StatusOK, http.StatusForbidden} {
		ev := env.WaitAuditEvent(func(ev testenv.AuditEvent) bool {
			return ev.User.Username == did && ev.Verb == "list" && ev.ObjectRef.Resource == "nodes" && ev.ResponseStatus.Code == want
		})
		if !slices.Contains(ev.User.Groups, testenv.OwnersGroup) || ev.RequestURI == "" {
			t.Errorf("audit event %+v: want group %s and a request URI", ev, testenv.OwnersGroup)
		}
	}
	env.WaitAuditEvent(func(ev testenv.AuditEvent) bool {
		return ev.ResponseStatus.Code == http.StatusUnauthorized && strings.HasPrefix(ev.RequestURI, "/api/v1/nodes")
	})

	front := env.StartFront(t, testenv.FrontOptions{HTTP11: true})
	resp, err := http.Get(front.URL + "/api/v1/namespaces/default")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"name":"default"`)) {
		t.Errorf("GET through front: %s %s", resp.Status, body)
	}
}

// upgrade sends the SPDY exec upgrade client-go sends (over HTTP/1.1, as
// its SPDY transport does) and returns the status code and Server header.
func upgrade(t *testing.T, base, path string, tlsCfg *tls.Config) (int, string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var conn net.Conn
	if u.Scheme == "https" {
		conn, err = tls.Dial("tcp", u.Host, tlsCfg)
	} else {
		conn, err = net.Dial("tcp", u.Host)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n"+
		"X-Stream-Protocol-Version: v4.channel.k8s.io\r\nContent-Length: 0\r\n\r\n", path, u.Host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("upgrade via %s: %v", base, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Server")
}

// The guide's failure: without `versions 1.1` Caddy turns an exec upgrade
// into HTTP/2 and answers 502 before reaching the apiserver; the good front
// passes it on, and the apiserver answers 404 for a pod that does not exist.
func TestFrontUpgrade502(t *testing.T) {
	env := testenv.Start(t)
	good := env.StartFront(t, testenv.FrontOptions{HTTP11: true})
	bad := env.StartFront(t, testenv.FrontOptions{})
	const path = "/api/v1/namespaces/default/pods/no-such-pod/exec?command=true&stdout=true"

	if code, _ := upgrade(t, good.URL, path, nil); code != http.StatusNotFound {
		t.Errorf("good front: upgrade = %d, want 404", code)
	}
	if code, server := upgrade(t, bad.URL, path, nil); code != http.StatusBadGateway || server != "Caddy" {
		t.Errorf("bad front: upgrade = %d (Server %q), want 502 from Caddy", code, server)
	}
	if !strings.Contains(bad.Log(), "invalid Upgrade request header") {
		t.Errorf("bad front log lacks the http2 upgrade error:\n%s", bad.Log())
	}

	// The kcp-style front: TLS on localhost, client certificate required.
	mtls := env.StartFront(t, testenv.FrontOptions{HTTP11: true, RequireClientCert: true})
	owner := env.TLSConfig(env.OwnerCert(did, time.Now().Add(time.Hour)))
	if code, _ := upgrade(t, mtls.URL, path, owner); code != http.StatusNotFound {
		t.Errorf("mTLS front: upgrade = %d, want 404", code)
	}
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: env.TLSConfig(nil, nil)}}
	if resp, err := noCert.Get(mtls.URL + "/version"); err == nil {
		resp.Body.Close()
		t.Errorf("mTLS front without client cert: %s, want a TLS failure", resp.Status)
	}
}

// Exec end to end: node and pod objects made by hand, the fake kubelet
// behind the node, client-go's SPDY executor through the good front.
func TestExecThroughFakeKubelet(t *testing.T) {
	env := testenv.Start(t)
	kubelet := env.StartFakeKubelet(t)
	env.CreateNode("node-1", testenv.ReadyNodeStatus("2", "4Gi", kubelet.Port))
	env.CreatePod("default", "runner", "node-1")
	env.SetPodStatus("default", "runner", testenv.PodRunning())

	pending := env.CreatePod("default", "job-pending", "")
	env.CreatePodEvent(pending, corev1.EventTypeWarning, "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.")
	pulling := env.CreatePod("default", "job-pull", "node-1")
	env.SetPodStatus("default", pulling.Name, testenv.PodWaiting("ImagePullBackOff", "Back-off pulling image"))

	cs := env.Clientset()
	evs, err := cs.CoreV1().Events("default").List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=job-pending"})
	if err != nil || len(evs.Items) != 1 || evs.Items[0].Reason != "FailedScheduling" {
		t.Errorf("events of job-pending: %v, %v", evs, err)
	}
	p, err := cs.CoreV1().Pods("default").Get(t.Context(), "job-pull", metav1.GetOptions{})
	if err != nil || p.Status.ContainerStatuses[0].State.Waiting.Reason != "ImagePullBackOff" {
		t.Errorf("job-pull status: %+v, %v", p.Status, err)
	}

	good := env.StartFront(t, testenv.FrontOptions{HTTP11: true})
	bad := env.StartFront(t, testenv.FrontOptions{})
	const path = "/api/v1/namespaces/default/pods/runner/exec?command=true&stdout=true"
	if code, _ := upgrade(t, good.URL, path, nil); code != http.StatusSwitchingProtocols {
		t.Errorf("good front: upgrade = %d, want 101", code)
	}
	if code, _ := upgrade(t, bad.URL, path, nil); code != http.StatusBadGateway {
		t.Errorf("bad front: upgrade = %d, want 502", code)
	}

	// What the runner does: SPDY exec via client-go, through the front.
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{Host: good.URL}, "POST", must(url.Parse(good.URL+path)))
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := exec.StreamWithContext(t.Context(), remotecommand.StreamOptions{Stdout: &stdout}); err != nil {
		t.Errorf("SPDY exec through good front: %v", err)
	}
	if stdout.String() != testenv.FakeKubeletOutput {
		t.Errorf("exec stdout = %q, want %q", stdout.String(), testenv.FakeKubeletOutput)
	}
	if reqs := kubelet.Requests(); !slices.Contains(reqs, "POST /exec/default/runner/main") {
		t.Errorf("fake kubelet requests = %v", reqs)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
