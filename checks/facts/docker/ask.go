package docker

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Answer is the daemon's answer to a request made as a client of one API
// version makes it: GET /v<api>/version.
type Answer struct {
	Request string `json:"request"` // "GET /v1.43/version"
	Status  int    `json:"status"`
	// Message is the daemon's own words for an error: the "message" of its
	// JSON answer ("client version 1.43 is too old. Minimum supported API
	// version is 1.44, please upgrade your client to a newer version"),
	// else the answer's first line.
	Message string `json:"message,omitempty"`
	Err     error  `json:"err,omitempty"` // no answer
}

// AskAs sends GET /v<api>/version to the runner's daemon, as the runner's
// client speaking api sends every request, and returns the daemon's
// answer: a 200, or the daemon's refusal in its own words. The daemon must
// have answered the fact's probe (d.Probe.Version set); the request goes
// where that one went, under the pass's call deadline, and a bundle keeps
// the answer.
func AskAs(p *checks.Pass, d *Daemon, e *configfacts.RunnerEntry, api string) *Answer {
	network, addr, key := "tcp", d.Addr.HostPort, "tcp "+d.Addr.HostPort
	if d.Socket != nil {
		network, addr, key = "unix", d.Socket.Local, "unix "+d.Socket.Seen
	}
	req := "GET /v" + api + "/version"
	a, _ := hostio.ProbeErr(p.Env, "docker", key+" "+req, func() (*Answer, error) {
		var tlsConf *tls.Config
		if d.Addr.TLSVerify && d.Addr.Scheme != "unix" {
			c, err := tlsConfig(e.File.Files, &d.Addr)
			if err != nil {
				return &Answer{Request: req, Err: err}, nil
			}
			tlsConf = c
		}
		timeout := p.CallTimeout()
		ctx, cancel := context.WithTimeout(p.Context, timeout)
		defer cancel()
		return ask(ctx, timeout, p.Env, network, addr, tlsConf, req), nil
	})
	return a
}

func ask(ctx context.Context, timeout time.Duration, env *hostio.Env, network, addr string, tlsConf *tls.Config, req string) *Answer {
	a := &Answer{Request: req}
	client, scheme, host, done := newClient(env, network, addr, tlsConf)
	defer done()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+host+strings.TrimPrefix(req, "GET "), nil)
	if err != nil {
		a.Err = err
		return a
	}
	resp, err := client.Do(r)
	if err != nil {
		a.Err = unwrapURL(err)
		if hostio.IsTimeout(err) {
			a.Err = fmt.Errorf("no answer within %s", timeout.Round(time.Millisecond))
		}
		return a
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		a.Err = err
		return a
	}
	if resp.StatusCode == http.StatusOK {
		return a
	}
	// The daemon's errors are {"message": "..."} (api/server/httputils,
	// moby v20.10 to v29); anything else is quoted by its first line.
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &m) == nil && m.Message != "" {
		a.Message = firstLine([]byte(m.Message))
	} else {
		a.Message = firstLine(b)
	}
	return a
}
