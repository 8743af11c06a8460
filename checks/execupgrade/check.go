// Package execupgrade probes the exec upgrade through every proxy between
// the runner and the apiserver: the guide's 502 at Caddy.
package execupgrade

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// ProbePod is the name the default probe asks for. It cannot be a pod the
// runner made (those are runner-…), so the apiserver answers 404 and nothing
// runs: a read-only test of the upgrade path.
const ProbePod = "doctor-upgrade-probe-nonexistent"

var Check = &checks.Check{
	ID:       "exec-upgrade",
	Title:    "The exec upgrade survives every proxy to the cluster",
	Severity: checks.Critical,
	Doc: checks.Doc{
		Cause: "The Kubernetes executor attaches and execs over SPDY only: POST …/pods/<pod>/exec with Connection: " +
			"Upgrade and Upgrade: SPDY/3.1. A reverse proxy that speaks HTTP/2 to its upstream drops the upgrade: " +
			"Caddy answers 502 unless its transport has `versions 1.1` (and `flush_interval -1` to stream). Plain " +
			"API calls still work, and kubectl ≥1.30 execs over WebSocket, so `kubectl exec` succeeds while every " +
			"job hangs.",
		Symptom: "The job hangs at \"Preparing the environment\" while its pod is Running; the runner's log shows error: unable to upgrade connection: empty server response, or 502 Bad Gateway",
		Fix: checks.Steps{
			checks.Say("In the kcp site block of the Caddyfile, the reverse_proxy to the apiserver streams and speaks HTTP/1.1 upstream " +
				"(" + upstreamNote + "):"),
			checks.Caddy(caddyFix),
			checks.Say("Then reload Caddy:"),
			checks.Sh("sudo systemctl reload caddy"),
		},
		Verify: checks.Target(
			checks.Say("Exec over SPDY, as the runner does, into a running pod of the runner's namespace:"),
			checks.Sh(`POD=$(`+checks.CatalogKubectl+` get pods -n "$RUNNER_NAMESPACE" --field-selector=status.phase=Running -o jsonpath='{.items[0].metadata.name}')
KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false `+checks.CatalogKubectl+` exec -n "$RUNNER_NAMESPACE" "$POD" -- true`)),
		Signs: []checks.Sign{
			// k8s.io/streaming pkg/httpstream/spdy/roundtripper.go, v0.37.2 (the SPDY round tripper
			// client-go's remotecommand uses): fmt.Errorf("unable to upgrade connection: %s",
			// upgradeErrorMessage(body)): the reason is the answer's Status message, its body, or
			// "empty server response". A reason another check explains is that check's: the
			// kubelet's `container not found ("helper")` (node-arch), an RBAC refusal (runner-rbac),
			// Unauthorized (cert-expiry, api-auth), error dialing backend (the kubelet checks); an
			// upgrade that reached the kubelet passed every proxy. What is left (an empty answer, a
			// proxy's 502 page, one that cannot be read) is a front that broke the upgrade.
			{Core: "unable to upgrade connection: ", Fallback: true},
		},
	},
	Requires:  []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Timeout:   3 * time.Minute, // --deep waits for a pod; the default probe takes a second
	Settings:  []*checks.Setting{ProbeImageSetting},
	Run:       run,
}

// caddyFix is the reverse_proxy that carries the exec upgrade: streaming
// (flush_interval -1) and HTTP/1.1 to the upstream, where the Upgrade
// header means something. Written one directive a line: the Caddyfile
// has no separator, and "{ a; b }" on one line does not adapt
// ("Unexpected next token after '{' on same line").
const caddyFix = "reverse_proxy {$KCP_UPSTREAM} {\n\tflush_interval -1\n\ttransport http {\n\t\tversions 1.1\n\t}\n}"

// upstreamNote says what {$KCP_UPSTREAM} stands for: doctor sees the front,
// not what is behind it.
const upstreamNote = "{$KCP_UPSTREAM} stands for the apiserver address your reverse_proxy already names: keep it"

// probeTimeout bounds each upgrade request of the default probe.
const probeTimeout = 10 * time.Second

func run(p *checks.Pass) error {
	api := kubefacts.APIClientFact.Get(p)
	ns := configfacts.RunnerEntryFact.Get(p).Namespace()
	// The probe tests the path to the apiserver (the proxies, their
	// upgrade handling), the same for every runner of this target whatever
	// its namespace: sent once, in the namespace of the runner of this
	// target that asks first (never another target's namespace). Which
	// one that was is on the tape, so a replay asks the same. Only a 403
	// there is asked again in this runner's namespace: whether a namespace
	// grants pods/exec is its own.
	first, _ := checks.Shared(p, "exec namespace "+api.Key, func() (string, error) {
		return hostio.Probe(p.Env, "exec-upgrade-namespace", api.TapeKey, func() (string, error) { return ns, nil })
	})
	if first == "" {
		first = ns // a bundle from before the choice was recorded
	}
	pr, err := probePair(p, api, first)
	if err == nil && pr.spdy.Status == http.StatusForbidden && first != ns {
		pr, err = probePair(p, api, ns)
	}
	if err != nil {
		return err
	}
	spdy, ws := pr.spdy, pr.ws
	ev := []checks.Evidence{{Source: "POST " + pr.path, Detail: spdy.String()}}
	if pr.wsSent {
		ev = append(ev, checks.Evidence{Source: "GET " + pr.path, Detail: ws.String()})
	}
	if !spdy.Passed() {
		p.Report(diagnose(spdy, ws, ev))
		return nil
	}
	if p.Env.Deep {
		return deep(p, api, ns)
	}
	return nil
}

// pair is one namespace's upgrade probes: SPDY, and WebSocket when SPDY
// failed.
type pair struct {
	spdy, ws Probe
	wsSent   bool
	path     string
}

// probePair sends the SPDY upgrade, the runner's, once per target and
// namespace. Only when it fails short of a 401 or 403 is the WebSocket
// upgrade (kubectl's since 1.30) sent after it, to say whether `kubectl
// exec` works while jobs hang. A healthy run thus opens one connection for
// the probe, not two: one TLS handshake with the client certificate and
// one request fewer, on both sides, in the busiest part of a run. A broken
// path pays the second probe's round trips.
func probePair(p *checks.Pass, api *kubefacts.APIClient, ns string) (pair, error) {
	u, err := ExecURL(api.Config, ns, ProbePod, "true")
	if err != nil {
		return pair{}, err
	}
	probe := func(proto Protocol) Probe {
		ctx, cancel := context.WithTimeout(p.Context, probeTimeout)
		defer cancel()
		return Upgrade(ctx, p.Env, api.Config, api.TapeKey, u, proto)
	}
	return checks.Shared(p, "exec "+api.Key+" ns "+ns, func() (pair, error) {
		x := pair{path: u.Path}
		x.spdy = probe(SPDY)
		if !x.spdy.Passed() && x.spdy.Status != http.StatusUnauthorized && x.spdy.Status != http.StatusForbidden {
			x.ws, x.wsSent = probe(WebSocket), true
		}
		return x, nil
	})
}

// diagnose names why the SPDY upgrade did not reach the apiserver.
func diagnose(spdy, ws Probe, ev []checks.Evidence) checks.Finding {
	f := checks.Finding{Evidence: ev}
	wsNote := ""
	if ws.Passed() {
		wsNote = " The WebSocket upgrade passes, so `kubectl exec` (WebSocket since 1.30) works while every job hangs: the runner speaks SPDY."
	}
	switch {
	case spdy.Err != nil && hostio.IsTimeout(spdy.Err):
		f.Cause = fmt.Sprintf("The SPDY exec upgrade to %s timed out after %s: a proxy holds the upgrade and never answers, and jobs hang at \"Preparing the environment\".", hostOf(spdy.URL), spdy.Took.Round(time.Millisecond)) + wsNote
	case spdy.Err != nil:
		f.Cause = fmt.Sprintf("The SPDY exec upgrade to %s failed: %v.", hostOf(spdy.URL), spdy.Err) + wsNote
		f.Fix = checks.Text("Fix the connection the error names; every job's attach fails the same way.")
	case spdy.Status == http.StatusUnauthorized:
		f.Severity, f.CausedBy = checks.Error, "api-auth"
		f.Cause = "The exec upgrade is refused with 401: the credential is not accepted (see api-auth)."
	case spdy.Status == http.StatusForbidden:
		f.Severity, f.CausedBy = checks.Error, "runner-rbac"
		f.Cause = "The exec upgrade is refused with 403: the identity may not create pods/exec (see runner-rbac)."
	case spdy.Status == http.StatusBadGateway || spdy.Status == http.StatusServiceUnavailable || spdy.Status == http.StatusGatewayTimeout:
		f.Cause = fmt.Sprintf("The proxy drops the exec upgrade: %d %s from %s. Caddy must speak HTTP/1.1 upstream "+
			"(transport http { versions 1.1 }) and flush_interval -1. Jobs hang at \"Preparing the environment\" while their pod is Running.",
			spdy.Status, http.StatusText(spdy.Status), serverOf(spdy)) + wsNote
	case spdy.Status == http.StatusBadRequest && strings.Contains(spdy.Body, "Upgrade request required"):
		f.Severity = checks.Error
		f.Cause = "The apiserver says \"Upgrade request required\": a hop on the way speaks HTTP/2, where the Upgrade header means nothing. Every hop to the apiserver must be HTTP/1.1 for exec." + wsNote
		f.Fix = checks.Steps{
			checks.Say("Make every proxy on the path speak HTTP/1.1 upstream. In Caddy, the reverse_proxy to the apiserver, in the " +
				"kcp site block (" + upstreamNote + "):"),
			checks.Caddy(caddyFix),
			checks.Say("Then reload Caddy:"),
			checks.Sh("sudo systemctl reload caddy"),
		}
	default:
		f.Severity = checks.Error
		f.Cause = fmt.Sprintf("The exec upgrade got %d %s from %s instead of reaching the apiserver.", spdy.Status, http.StatusText(spdy.Status), serverOf(spdy)) + wsNote
	}
	return f
}

func serverOf(p Probe) string {
	if p.Server != "" {
		return "Server: " + p.Server
	}
	return hostOf(p.URL)
}

// hostOf is the host:port a probe went to.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}
