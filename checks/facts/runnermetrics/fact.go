// Package runnermetrics reads the runner's own Prometheus metrics: one
// bounded GET of the /metrics its listen_address serves (or --metrics-url),
// parsed with prometheus/common's expfmt, each family doctor reads checked
// against the definitions of the runner version that serves it (Defs).
// It is read-only: /metrics is the endpoint Prometheus scrapes.
package runnermetrics

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// MetricsURLSetting is where to read the metrics instead of the runner's
// own listen address: a runner in a container whose port is published
// elsewhere, or doctor run apart from the runner.
var MetricsURLSetting = &checks.Setting{Name: "metrics-url",
	Usage: "read the runner's Prometheus metrics at `URL` (default: /metrics at the runner's listen address: its run command's --listen-address or LISTEN_ADDRESS, else config.toml's listen_address)"}

// DefaultPort is the port the runner adds to a listen_address without one:
// common.DefaultMetricsServerPort (common/consts.go, gitlab-runner v19.3.0).
const DefaultPort = "9252"

// Endpoint is where the runner serves its metrics, and where that came from.
type Endpoint struct {
	URL     string `json:"url"`     // http://127.0.0.1:9252/metrics
	Address string `json:"address"` // as configured: ":9252", "localhost"
	// Source and Detail are the evidence of where the address came from.
	Source string `json:"source"`
	Detail string `json:"detail"`
}

// Exposition is what the runner's /metrics said, or why it was not read.
type Exposition struct {
	Endpoint
	// None says why there is nothing to read (no listen_address, no
	// process): the check is skipped with it.
	None string `json:"none,omitempty"`
	// Scrape is the answer; nil when nothing was asked (None, --offline).
	Scrape *Scrape `json:"scrape,omitempty"`
}

// Fact reads the metrics once per run: one process serves them for all its
// [[runners]].
var Fact = &checks.Fact[*Exposition]{
	ID:       "runner-metrics-scrape",
	Doc:      "the runner's own Prometheus metrics: one bounded GET of the /metrics its listen_address (or --metrics-url) serves, checked against the runner version's metric definitions",
	Requires: []checks.Node{configfacts.ConfigFact, hostfacts.RunAsFact, hostfacts.EnvironFact},
	Settings: []*checks.Setting{MetricsURLSetting},
	Network:  true,
	Compute: func(p *checks.Pass) (*Exposition, error) {
		cfg, ra, env := configfacts.ConfigFact.Get(p), hostfacts.RunAsFact.Get(p), hostfacts.EnvironFact.Get(p)
		m := &Exposition{}
		ep, none, err := endpoint(p.Env, cfg, ra, env)
		if err != nil {
			return nil, err
		}
		if none != "" {
			m.None = none
			return m, nil
		}
		m.Endpoint = ep
		timeout := p.CallTimeout()
		m.Scrape, _ = hostio.ProbeErr(p.Env, "runner-metrics", ep.URL, func() (*Scrape, error) {
			return scrape(p.Context, p.Env, ep.URL, timeout, runnersOf(cfg)), nil
		})
		return m, nil
	},
}

// endpoint is the URL to read: --metrics-url, else the runner's own address
// chosen as it chooses it (commands/multi.go listenAddress, gitlab-runner
// v19.3.0): the run command's --listen-address (or LISTEN_ADDRESS, its
// environment variable), else config.toml's listen_address; without a port,
// DefaultPort. An error is a --metrics-url doctor cannot use.
func endpoint(env *hostio.Env, cfg *configfacts.ConfigFile, ra *hostfacts.RunAs, e *hostfacts.Environ) (Endpoint, string, error) {
	if raw := MetricsURLSetting.Value(env); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Endpoint{}, "", fmt.Errorf("--metrics-url %q is not an http or https URL", raw)
		}
		u.User = nil
		if u.Path == "" {
			u.Path = "/metrics"
		}
		return Endpoint{URL: u.String(), Address: u.Host, Source: "--metrics-url", Detail: u.String()}, "", nil
	}
	var ep Endpoint
	switch {
	case ra.Process != nil && flagAddress(ra.Process.Cmdline) != "":
		ep.Address = flagAddress(ra.Process.Cmdline)
		ep.Source, ep.Detail = "/proc/"+strconv.Itoa(ra.Process.PID)+"/cmdline", "--listen-address "+ep.Address
	case e != nil && e.Err == nil && lookup(e, "LISTEN_ADDRESS") != "":
		ep.Address = lookup(e, "LISTEN_ADDRESS")
		ep.Source, ep.Detail = e.Where("LISTEN_ADDRESS"), "LISTEN_ADDRESS="+ep.Address
	case cfg.Decoded() && strings.TrimSpace(cfg.Config.ListenAddress) != "":
		ep.Address = strings.TrimSpace(cfg.Config.ListenAddress)
		src, text := cfg.At([]string{"listen_address"})
		ep.Source, ep.Detail = src, strings.TrimSpace(text)
	case !cfg.Decoded() && rawListenAddress(cfg) != "":
		// The process runs what it last loaded; the line as written is the
		// best account of it doctor has.
		ep.Address = rawListenAddress(cfg)
		src, _ := cfg.At([]string{"listen_address"})
		ep.Source, ep.Detail = src, "listen_address = "+strconv.Quote(ep.Address)+" (read from the line as written: the file does not decode)"
	case !cfg.Decoded():
		return ep, "needs config-decode: the listen_address of a config.toml that does not decode is unknown", nil
	default:
		return ep, "config.toml sets no listen_address (and the run command has no --listen-address): the runner serves no metrics", nil
	}
	if ra.Process == nil {
		return ep, "no runner process runs, so nothing serves " + ep.Address + " (give --metrics-url to read another's)", nil
	}
	host, port, err := net.SplitHostPort(ep.Address)
	if err != nil {
		if !strings.Contains(err.Error(), "missing port in address") {
			// The runner logs "invalid listen address: %s" and serves no metrics.
			return ep, fmt.Sprintf("the runner refuses listen address %q (%v) and serves no metrics; config-lint reports it", ep.Address, err), nil
		}
		host, port = ep.Address, DefaultPort
	}
	// An unspecified address listens on every interface, loopback included.
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	ep.URL = (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/metrics"}).String()
	return ep, "", nil
}

// rawAddressLine is a top-level listen_address line with a basic or
// literal string value.
var rawAddressLine = regexp.MustCompile(`^\s*listen_address\s*=\s*(?:"([^"\\]*)"|'([^']*)')\s*(?:#.*)?$`)

// rawListenAddress is listen_address as written in a config.toml that does
// not decode: the first such line before any table, "" when there is none.
func rawListenAddress(cfg *configfacts.ConfigFile) string {
	for _, line := range strings.Split(string(cfg.Data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "[") {
			return ""
		}
		if m := rawAddressLine.FindStringSubmatch(line); m != nil {
			return strings.TrimSpace(m[1] + m[2])
		}
	}
	return ""
}

func flagAddress(cmdline []string) string {
	v, _ := hostfacts.FlagValue(cmdline, "--listen-address")
	return strings.TrimSpace(v)
}

func lookup(e *hostfacts.Environ, k string) string {
	v, _ := e.Lookup(k)
	return strings.TrimSpace(v)
}
