package docker

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
)

// DefaultHost is where the runner's Docker client connects when neither
// [runners.docker] host nor DOCKER_HOST names a daemon: moby's
// client.DefaultDockerHost (github.com/moby/moby/client v0.5.1,
// client_unix.go, the version gitlab-runner v19.3.0's go.mod requires).
const DefaultHost = "unix:///var/run/docker.sock"

// Address is where the runner's Docker client connects and with which TLS
// settings, chosen as gitlab-runner v19.3.0 chooses them
// (helpers/docker/official_docker_client.go, New):
//
//	if c.Host == "" {
//		c = credentialsFromEnv()
//	}
//	// Use the default if nothing is specified by caller *or* environment
//	if c.Host == "" {
//		c.Host = client.DefaultDockerHost
//	}
//
// credentialsFromEnv (helpers/docker/credentials.go, v19.3.0) replaces the
// whole credentials: DOCKER_HOST, DOCKER_CERT_PATH, and
// strconv.ParseBool(os.Getenv("DOCKER_TLS_VERIFY")). So with host set in
// config.toml the environment's TLS settings are ignored, and without it
// config.toml's tls_verify and tls_cert_path are.
type Address struct {
	Host string // as the client parses it: "unix:///var/run/docker.sock", "tcp://127.0.0.1:2376"
	// Source and Detail are the evidence of where Host came from.
	Source, Detail string
	FromEnv        bool // the credentials are the environment's
	Scheme         string
	Socket         string // the unix socket's path, for Scheme "unix"
	HostPort       string // for tcp, http and https
	TLSVerify      bool
	CertPath       string
	// Ignored lists settings the runner does not use, each with its
	// evidence: the other source's TLS settings.
	Ignored []Ignored
	// BadTLSVerify is DOCKER_TLS_VERIFY when strconv.ParseBool refuses it
	// ("yes", "on"): the runner reads false where the docker CLI, which
	// takes any non-empty value, turns TLS on.
	BadTLSVerify string
	ParseErr     error
}

// Ignored is a setting the runner reads from nowhere.
type Ignored struct {
	Key, Value, Source, Why string
}

// resolveAddress applies the runner's choice to one runner's
// [runners.docker] and the runner process's environment.
func resolveAddress(e *configfacts.RunnerEntry, env *hostfacts.Environ) Address {
	d := e.Runner.Docker
	var a Address
	var cfgHost, cfgCert string
	var cfgVerify bool
	if d != nil {
		cfgHost, cfgCert, cfgVerify = strings.TrimSpace(d.Host), d.CertPath, d.TLSVerify
	}
	lookup := func(k string) (string, bool) {
		if env == nil || env.Err != nil {
			return "", false
		}
		return env.Lookup(k)
	}
	if cfgHost != "" {
		src, text := e.At("docker", "host")
		a = Address{Host: cfgHost, Source: src, Detail: strings.TrimSpace(text), TLSVerify: cfgVerify, CertPath: cfgCert}
		for _, k := range []string{"DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"} {
			if v, ok := lookup(k); ok && v != "" {
				a.Ignored = append(a.Ignored, Ignored{Key: k, Value: v, Source: env.Where(k),
					Why: "[runners.docker] host is set, so the runner takes tls_verify and tls_cert_path from config.toml only"})
			}
		}
	} else {
		a.FromEnv = true
		h, _ := lookup("DOCKER_HOST")
		a.Host = strings.TrimSpace(h)
		a.CertPath, _ = lookup("DOCKER_CERT_PATH")
		if raw, ok := lookup("DOCKER_TLS_VERIFY"); ok && raw != "" {
			v, err := strconv.ParseBool(raw)
			a.TLSVerify = v
			if err != nil {
				a.BadTLSVerify = raw
			}
		}
		if a.Host != "" {
			a.Source, a.Detail = env.Where("DOCKER_HOST"), "DOCKER_HOST="+a.Host
		} else {
			a.Host = DefaultHost
			a.Source, a.Detail = "default", "no [runners.docker] host and no DOCKER_HOST in the runner's environment: moby's client.DefaultDockerHost "+DefaultHost
		}
		if d != nil && (d.TLSVerify || d.CertPath != "") {
			for _, k := range []struct {
				key, val string
				set      bool
			}{{"tls_verify", "true", d.TLSVerify}, {"tls_cert_path", d.CertPath, d.CertPath != ""}} {
				if k.set {
					src, _ := e.At("docker", k.key)
					a.Ignored = append(a.Ignored, Ignored{Key: k.key, Value: k.val, Source: src,
						Why: "[runners.docker] host is not set, so the runner takes the daemon address and its TLS settings from the environment (DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) only"})
				}
			}
		}
	}
	a.parse()
	return a
}

// parse splits Host as moby's client.ParseHostURL does (client.go,
// github.com/moby/moby/client v0.5.1): "proto://addr", and for tcp a URL.
func (a *Address) parse() {
	proto, addr, ok := strings.Cut(a.Host, "://")
	if !ok || addr == "" {
		a.ParseErr = fmt.Errorf("unable to parse docker host `%s`", a.Host) // moby client.ParseHostURL's words
		return
	}
	a.Scheme = proto
	switch proto {
	case "unix":
		a.Socket = path.Clean(addr)
	case "tcp", "http", "https":
		u, err := url.Parse("tcp://" + addr)
		if err != nil {
			a.ParseErr = err
			return
		}
		a.HostPort = u.Host
	}
}
