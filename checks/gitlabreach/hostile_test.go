package gitlabreach_test

import (
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
)

// The tailnet cases only resolve: the system resolver answers 100.x, and
// the tailnet setting says this host is off the tailnet, so the address is
// never dialled (DialOrder proves that below).
const tailnetIP = "100.101.102.103"

func TestTailnetOnlyNameWithAPublicFunnel(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	sys := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {tailnetIP}})
	r := reach(t, w.root(t), gitlabtest.Settings(sys.Addr, w.public.Addr, stage))
	wantSays(t, r, checks.StatusFail,
		"[info]", "only to tailnet addresses ("+tailnetIP+")", "public DNS gives them 127.0.0.1 (the Funnel)",
		"the tcp stage failed at "+tailnetIP, "not dialled")
}

func TestTailnetOnlyNameWithNoPublicAddress(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	sys := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {tailnetIP}})
	public := gitlabtest.NewDNS(t, nil)
	r := reach(t, w.root(t), gitlabtest.Settings(sys.Addr, public.Addr, stage))
	wantSays(t, r, checks.StatusFail, "[error]", "job pods cannot reach this GitLab", "unable to access", "GIT_STRATEGY: none")
}

func TestPrivateNameIsAWarningForRentedNodes(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	public := gitlabtest.NewDNS(t, nil)
	r := reach(t, w.root(t), gitlabtest.Settings(w.sys.Addr, public.Addr, stage))
	wantSays(t, r, checks.StatusFail, "[warning]", "not in public DNS", "Could not resolve host")
}

func TestDialOrderNeverDialsTailnetOffTheTailnet(t *testing.T) {
	addrs := []netip.Addr{netip.MustParseAddr(tailnetIP), netip.MustParseAddr("fd7a:115c:a1e0::1"), netip.MustParseAddr("127.0.0.1")}
	dial, skipped := gitlab.DialOrder(addrs, false)
	if len(dial) != 1 || dial[0].String() != "127.0.0.1" || len(skipped) != 2 {
		t.Errorf("off the tailnet: dial %v, skipped %v", dial, skipped)
	}
	if dial, _ := gitlab.DialOrder(addrs, true); len(dial) != 2 {
		t.Errorf("on the tailnet: dial %v, want the first two", dial)
	}
}

// hostile runs the check against url's port and reports how long it took.
func hostile(t *testing.T, dnsAddr, port string) (checks.CheckResult, time.Duration) {
	w := newWorld(t, gitlabtest.Options{})
	root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "r", URL: "https://" + gitlabtest.Host + ":" + port + "/",
		Token: "glrt-x", CAFile: gitlabtest.CAPath}), w.gl.CA)
	if dnsAddr == "" {
		dnsAddr = w.sys.Addr
	}
	start := time.Now()
	r := reach(t, root, gitlabtest.Settings(dnsAddr, w.public.Addr, stage))
	took := time.Since(start)
	t.Logf("%s: %s", t.Name(), took.Round(time.Millisecond))
	return r, took
}

func port(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

// within is the bound every hostile endpoint must be judged in: a few stage
// deadlines, far below the check's own timeout.
const within = 4 * stage

func TestSilentListenerIsATLSTimeout(t *testing.T) {
	r, took := hostile(t, "", port(gitlabtest.Silent(t)))
	wantSays(t, r, checks.StatusFail, "the tls stage failed at 127.0.0.1:", "no answer within 1s")
	if took > within {
		t.Errorf("took %s, want under %s", took, within)
	}
}

func TestGarbageIsNoTLSHandshake(t *testing.T) {
	r, took := hostile(t, "", port(gitlabtest.Garbage(t)))
	wantSays(t, r, checks.StatusFail, "the tls stage failed", "no TLS handshake")
	if took > within {
		t.Errorf("took %s, want under %s", took, within)
	}
}

func TestGarbageDNSIsADNSFinding(t *testing.T) {
	r, took := hostile(t, gitlabtest.GarbageDNS(t), "443")
	wantSays(t, r, checks.StatusFail, "the dns stage failed", "garbage")
	if took > within {
		t.Errorf("took %s, want under %s", took, within)
	}
}

func TestTruncatingDNSIsADNSFinding(t *testing.T) {
	r, took := hostile(t, gitlabtest.TruncatingDNS(t), "443")
	wantSays(t, r, checks.StatusFail, "the dns stage failed", "truncated")
	if took > within {
		t.Errorf("took %s, want under %s", took, within)
	}
}

// A 1 GiB answer is read to MaxBody and no further: the server can only
// write what the socket buffers and that first MiB take, and the heap does
// not grow by anything near the body.
func TestGibibyteBodyIsReadBounded(t *testing.T) {
	body := &gitlabtest.Endless{Size: 1 << 30}
	w := newWorld(t, gitlabtest.Options{Version: body})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	r := reach(t, w.root(t), w.settings())
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("1 GiB body: %s, server wrote %d KiB, allocated %d KiB", took.Round(time.Millisecond),
		body.Written.Load()>>10, (after.TotalAlloc-before.TotalAlloc)>>10)
	wantSays(t, r, checks.StatusFail, "the http stage failed", "longer than 1024 KiB")
	if n := body.Written.Load(); n > 64<<20 {
		t.Errorf("the server wrote %d MiB: the client kept reading", n>>20)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 64<<20 {
		t.Errorf("allocated %d MiB during the check", a>>20)
	}
	if took > within {
		t.Errorf("took %s, want under %s", took, within)
	}
	if strings.Contains(text(r), "\x00") {
		t.Error("the body leaked into the finding")
	}
}

func TestTailnetIPLiteralIsNeitherResolvedNorDialled(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "r", URL: "https://" + tailnetIP + ":8443/", Token: "glrt-x"}), nil)
	r := reach(t, root, w.settings())
	wantSays(t, r, checks.StatusFail, "names the tailnet address "+tailnetIP, "the tcp stage failed at "+tailnetIP, "not dialled")
}
