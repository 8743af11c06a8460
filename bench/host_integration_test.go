//go:build integration

package bench

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

func setup(t *testing.T) *bench {
	b := &bench{t: t, dir: t.TempDir()}
	b.doctor, b.peakrss = filepath.Join(b.dir, "doctor"), filepath.Join(b.dir, "peakrss")
	for bin, pkg := range map[string]string{b.doctor: "cmd/doctor", b.peakrss: "testkit/testenv/peakrss"} {
		// Static, as the README's install builds it.
		build := exec.Command("go", "build", "-o", bin, "github.com/socialwebcomputer/doctor/"+pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	runbook, err := filepath.Abs("runbook.sh")
	if err != nil {
		t.Fatal(err)
	}
	b.runbook = runbook
	b.dns = loopbackDNS(t)
	b.env = testenv.Start(t)
	b.env.BindOwnersToClusterAdmin()
	b.env.EnsureNamespace(runnerNS)

	// The runner host: the guide's config.toml and the owner's kubeconfig
	// at the guide's path, named by the runner process's KUBECONFIG.
	cert, key := b.env.OwnerCert(ownerDID, time.Now().Add(12*time.Hour))
	b.cert, b.key = cert, key
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, testpki.Kubeconfig("tenant-ci", b.env.URL, b.env.CAPEM, cert, key))
	b.root = root.Dir
	// The operator's shell: the same kubeconfig, the plain kubectl, and a
	// discovery cache of its own (warm after hyperfine's warm-up runs, as
	// an operator's is) instead of this machine's ~/.kube/cache; doctor's
	// cache (--cache-dir's default) is the benchmark's own too.
	b.cmdEnv = append(os.Environ(),
		"KUBECONFIG="+filepath.Join(root.Dir, testroot.KubeconfigPath),
		"KUBECTL="+testenv.Bin(t, "kubectl"),
		"KUBECACHEDIR="+filepath.Join(b.dir, "kube-cache"),
		"XDG_CACHE_HOME="+filepath.Join(b.dir, "cache"))
	return b
}

// seedSmall is a small, healthy cluster: three nodes with their node-dns
// pod, two Running job pods. The nodes' kubelet is a fake one on loopback,
// so kubelet-reach's log reads reach it through the apiserver and pass, as
// on a healthy cluster (with no kubelet port the apiserver's dial failed,
// and every run reported three unreachable kubelets). It returns the
// function that deletes them.
func seedSmall(t *testing.T, env *testenv.Env) (unseed func()) {
	kubelet := env.StartFakeKubelet(t)
	cs, err := fastClient(env)
	if err != nil {
		t.Fatal(err)
	}
	core := cs.CoreV1()
	var nodes, pods []string // pods as namespace/name
	unseed = func() {
		now := metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))} // no kubelet will confirm
		for _, p := range pods {
			ns, name, _ := strings.Cut(p, "/")
			if err := core.Pods(ns).Delete(t.Context(), name, now); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range nodes {
			if err := core.Nodes().Delete(t.Context(), n, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 3; i++ {
		n, err := core.Nodes().Create(t.Context(), node(tenK.Nodes+i), metav1.CreateOptions{})
		if err == nil {
			n.Status = nodeStatus(i)
			n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(kubelet.Port)
			_, err = core.Nodes().UpdateStatus(t.Context(), n, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n.Name)
	}
	for i := 0; i < 5; i++ {
		p := nodeDNSPod(tenK.Nodes + i%3)
		if i >= 3 {
			p = jobPod(runnerNS, tenK.RunnerRunning+tenK.RunnerPending+i, nodeName(tenK.Nodes+i%3))
		} else {
			p.Name += "-small"
		}
		created, err := core.Pods(p.Namespace).Create(t.Context(), p, metav1.CreateOptions{})
		if err == nil {
			created.Status = runningStatus(created, 60000+i)
			_, err = core.Pods(p.Namespace).UpdateStatus(t.Context(), created, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p.Namespace+"/"+p.Name)
	}
	return unseed
}

// loopbackDNS answers every A question with 127.0.0.1 (and nothing else),
// over UDP and TCP on one loopback port: a GitLab URL then resolves to a
// closed loopback port and fails fast, without leaving the machine.
func loopbackDNS(t *testing.T) string {
	var pc net.PacketConn
	var l net.Listener
	for pc == nil {
		var err error
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if pc, err = net.ListenPacket("udp", l.Addr().String()); err != nil {
			l.Close() // that UDP port is taken: another
		}
	}
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		for _, q := range r.Question {
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{A: net.IPv4(127, 0, 0, 1),
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}})
			}
		}
		_ = w.WriteMsg(m)
	})
	var wg sync.WaitGroup
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: handler}, {Listener: l, Handler: handler}} {
		wg.Add(1)
		srv.NotifyStartedFunc = wg.Done
		go func() { _ = srv.ActivateAndServe() }()
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	wg.Wait()
	return pc.LocalAddr().String()
}

// loadavg is the 1, 5 and 15 minute load of the machine: on a shared
// 2-core machine it says how quiet a measurement was.
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
