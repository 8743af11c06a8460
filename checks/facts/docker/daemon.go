package docker

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Daemon is the Docker daemon of one Docker-executor runner, as far as doctor
// could see it: the address, the socket file, and the daemon's answer.
type Daemon struct {
	Applies bool // false for a runner of another executor: nothing was looked at
	Addr    Address
	EnvErr  error   // the runner's environment is unknown, so DOCKER_HOST is
	Socket  *Socket // for a unix address
	// NotProbed says why doctor did not ask the daemon ("offline", ...).
	NotProbed string
	TLSErr    *TLSError // the TLS settings could not be loaded
	Probe     *Probe
}

// DaemonFact gathers it once per runner; docker-socket judges it, and
// helper-image reads the daemon's architecture from it.
var DaemonFact = &checks.Fact[*Daemon]{
	ID:       "docker-daemon",
	Doc:      "a Docker runner's daemon address (host, DOCKER_HOST or the default socket), its socket file, and the daemon's /_ping and /version",
	Requires: []checks.Node{configfacts.RunnerEntryFact, hostfacts.EnvironFact, hostfacts.RunnerFact},
	Compute: func(p *checks.Pass) (*Daemon, error) {
		e := configfacts.RunnerEntryFact.Get(p)
		if checks.NormalizeExecutor(e.Runner.Executor) != checks.Docker {
			return &Daemon{}, nil
		}
		env := hostfacts.EnvironFact.Get(p)
		d := &Daemon{Applies: true, Addr: resolveAddress(e, env)}
		if env.Err != nil && d.Addr.FromEnv {
			d.EnvErr = env.Err
		}
		if d.Addr.ParseErr != nil {
			return d, nil
		}
		switch d.Addr.Scheme {
		case "unix":
			d.Socket = statSocket(p.Env, hostfacts.RunnerFact.Get(p).Selected, d.Addr.Socket)
		case "tcp", "http", "https":
		default:
			d.NotProbed = "doctor probes unix and tcp daemon addresses, not " + d.Addr.Scheme + "://"
			return d, nil
		}
		gather(p, d)
		return d, nil
	},
}

// gather asks the daemon, when that is this host's daemon to ask.
func gather(p *checks.Pass, d *Daemon) {
	var tlsConf *tls.Config
	if d.Addr.TLSVerify && d.Addr.Scheme != "unix" {
		// The files are the host's: read (as the runner) offline too.
		c, err := tlsConfig(configfacts.RunnerEntryFact.Get(p).File.Files, &d.Addr)
		if err != nil {
			d.TLSErr, d.NotProbed = err, "the TLS settings do not load"
			return
		}
		tlsConf = c
	}
	if p.Env.Offline {
		d.NotProbed = "offline"
		return
	}
	// The probe's own deadline, shorter than the node's and the run's: a
	// daemon that accepts and never answers is a finding, not a fact the
	// run's --timeout cut short.
	timeout := p.CallTimeout()
	ctx, cancel := context.WithTimeout(p.Context, timeout)
	defer cancel()
	if d.Socket != nil {
		if !d.Socket.IsSocket() {
			d.NotProbed = "no socket to connect to"
			return
		}
		if !insideRoot(p.Env.Root, d.Socket.Local) {
			d.NotProbed = "the socket is not inside --root " + p.Env.Root
			return
		}
		// A bundle keeps the daemon's answers, by the path the runner opens.
		d.Probe, _ = hostio.ProbeErr(p.Env, "docker", "unix "+d.Socket.Seen, func() (*Probe, error) {
			return probe(ctx, timeout, p.Env, "unix", d.Socket.Local, tlsConf), nil
		})
		return
	}
	d.Probe, _ = hostio.ProbeErr(p.Env, "docker", "tcp "+d.Addr.HostPort, func() (*Probe, error) {
		return probe(ctx, timeout, p.Env, "tcp", d.Addr.HostPort, tlsConf), nil
	})
}

// insideRoot is a second guard over inRoot's resolution: under a --root
// other than / doctor dials only a socket file inside it, never one of the
// machine it runs on.
func insideRoot(root, local string) bool {
	if root == "" || root == "/" {
		return true
	}
	rel, err := filepath.Rel(root, local)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
