// Package gitlab is doctor's GitLab client: it reaches a GitLab the way the
// runner does (the system resolver under --root, a TCP connection through
// Env.Dial, TLS trusting the system roots plus the runner's tls-ca-file) in
// separate stages, each under its own deadline, so a failure names the stage
// and the address. Every read from the network is bounded.
package gitlab

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Stage is where a probe stopped.
type Stage string

const (
	StageDNS  Stage = "dns"
	StageTCP  Stage = "tcp"
	StageTLS  Stage = "tls"
	StageHTTP Stage = "http"
)

// ResolverSetting and PublicDNSSetting are what the operator may give the
// look-ups of a GitLab's name (ResolveSystem, ResolvePublic); a node that
// resolves one declares them.
var (
	ResolverSetting = &checks.Setting{Name: "resolver",
		Usage: "ask the DNS server at `HOST:PORT` for the system resolver (default: the nameservers of /etc/resolv.conf under --root)"}
	PublicDNSSetting = &checks.Setting{Name: "public-dns", Default: "1.1.1.1:53",
		Usage: "ask the public resolver at `HOST:PORT` whether a Funnel name resolves publicly (default 1.1.1.1:53)"}
)

// Settings read through Env.Setting. They have no CLI flag: tests shorten
// the deadlines, and pin the tailnet answer so that no test ever depends on
// (or dials through) the machine's own interfaces.
const (
	// SettingStageTimeout is a Go duration that replaces every stage's deadline.
	SettingStageTimeout = "gitlab-stage-timeout"
	// SettingTailnet is "yes" or "no": whether this host is on the tailnet.
	// Empty means look at the interfaces.
	SettingTailnet = "tailnet"
)

// Deadlines bound each stage on its own: a slow DNS server must not eat the
// time of the TLS handshake, and the finding can say which one ran out.
type Deadlines struct {
	DNS  time.Duration // per nameserver
	TCP  time.Duration // per address
	TLS  time.Duration
	HTTP time.Duration // request written to body read
}

// DefaultDeadlines keep a whole probe under the check's timeout even when
// every stage runs out: 2 nameservers, 2 addresses, a handshake, a request.
var DefaultDeadlines = Deadlines{DNS: 2 * time.Second, TCP: 3 * time.Second, TLS: 4 * time.Second, HTTP: 5 * time.Second}

// StageDeadlines are the defaults, or the gitlab-stage-timeout setting.
func StageDeadlines(env *hostio.Env) Deadlines {
	if d, err := time.ParseDuration(env.Setting(SettingStageTimeout, "")); err == nil && d > 0 {
		return Deadlines{DNS: d, TCP: d, TLS: d, HTTP: d}
	}
	return DefaultDeadlines
}

// Target is one GitLab to reach: scheme, host, port and the URL's path (a
// GitLab under a relative URL root has its API below it).
type Target struct {
	Base *url.URL // no user info, query or fragment; path ends in "/"
	Host string   // without brackets
	Port string
	From []string // where it came from, for findings: `[[runners]] "x" url`, "CI_REPOSITORY_URL"
	// Runners are the runners whose url it is: a finding names the runner
	// when there is one, and none when several share the GitLab.
	Runners []checks.RunnerRef
	TLS     TLSFiles // the runner's tls-*-file settings; none for CI_REPOSITORY_URL alone
}

// Addr is host:port.
func (t *Target) Addr() string { return net.JoinHostPort(t.Host, t.Port) }

// Origin is scheme://host:port, the identity two targets share.
func (t *Target) Origin() string { return t.Base.Scheme + "://" + t.Addr() }

// Endpoint is the URL of an API path ("api/v4/version") below Base.
func (t *Target) Endpoint(path string) *url.URL {
	u := *t.Base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + strings.TrimPrefix(path, "/")
	return &u
}

// Named joins where the target came from: `[[runners]] "a" url and CI_REPOSITORY_URL`.
func (t *Target) Named() string { return strings.Join(t.From, " and ") }

// NoClientError is a url the runner cannot build a GitLab client for
// either: newClient (network/client.go, gitlab-runner v19.3.0) fails with
// "parse URL: %w" or "only http or https scheme supported", so every job
// request is clientError, which marks the runner unhealthy.
type NoClientError struct{ msg string }

func (e *NoClientError) Error() string { return e.msg }

// ParseURL reads a runner url. CI_REPOSITORY_URL carries the job token as
// user info (https://gitlab-ci-token:<token>@host/...), so user info is
// dropped here and never reaches a finding; keepPath false drops the path
// too (a repository path says nothing about where the API lives).
func ParseURL(raw string, keepPath bool, from string) (*Target, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url's error quotes the input, which may hold the job token.
		return nil, &NoClientError{fmt.Sprintf("%s is not a URL", from)}
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, &NoClientError{fmt.Sprintf("%s is not an http or https URL (scheme %q)", from, u.Scheme)}
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%s has no host", from)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	b := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}
	if keepPath {
		b.Path = strings.TrimSuffix(u.Path, "/") + "/"
	}
	return &Target{Base: b, Host: u.Hostname(), Port: port, From: []string{from}}, nil
}

// Merge de-duplicates targets by origin, keeping the first one's path (the
// runner's url, which names the API root) and every origin label.
func Merge(ts []*Target) []*Target {
	var out []*Target
	byOrigin := map[string]*Target{}
	for _, t := range ts {
		if prev := byOrigin[t.Origin()]; prev != nil {
			prev.From = append(prev.From, t.From...)
			prev.Runners = append(prev.Runners, t.Runners...)
			continue
		}
		byOrigin[t.Origin()] = t
		out = append(out, t)
	}
	return out
}
