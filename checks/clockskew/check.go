// Package clockskew compares this host's clock with the clocks of the
// servers doctor talks to anyway: the apiserver (or its front) and GitLab.
// It reads the Date header of answers other checks already received
// (hostio.Env.SawDate), so it sends nothing of its own.
package clockskew

import (
	"fmt"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// ID names the check.
const ID = "clock-skew"

// Thresholds: a Date header has one-second resolution and is stamped
// somewhere inside the request, so up to a second plus the round trip is
// no skew at all. Beyond that, WarnAt is worth a look and ErrorAt breaks
// the 60 s certificates of this world for half their life.
const (
	WarnAt  = 10 * time.Second
	ErrorAt = 30 * time.Second
)

// expiredCore is crypto/x509's CertificateInvalidError.Error for Expired
// past the end (verify.go, go1.26).
const expiredCore = "x509: certificate has expired or is not yet valid: current time * is after "

const expiredTell = "clock-skew compares this host's clock with the servers' Date; the server's certificate's NotAfter (openssl s_client -connect HOST:PORT | openssl x509 -noout -enddate) says whether it really expired"

var Check = &checks.Check{
	ID:       ID,
	Title:    "This host's clock agrees with the apiserver's and GitLab's",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "Certificates here live from 60 s (the kcp client certificates) to 24 h, and every TLS peer " +
			"judges them by its own clock. A clock a few tens of seconds off makes a certificate that is fine " +
			"on disk not yet valid, or already expired, to whoever checks it: the runner's client-go against " +
			"the apiserver's, or GitLab's against the runner's. doctor compares this host's clock with the Date " +
			"header of the answers it already receives from the apiserver front and from GitLab, and names the " +
			"clock that disagrees: when both servers agree with each other, it is this host's.",
		// Go's crypto/x509 CertificateInvalidError (verify.go, go1.26), which
		// client-go and the runner's GitLab client print as the TLS error:
		// "x509: certificate has expired or is not yet valid: " + Detail, with
		// Detail "current time %s is before %s" or "current time %s is after %s".
		Symptom: "x509: certificate has expired or is not yet valid: current time 2026-11-29T12:00:40Z is before 2026-11-29T12:01:00Z",
		Fix: checks.Steps{
			checks.Say("Synchronise the clock that disagrees with NTP; on this host (on a server, the same on the machine that runs it):"),
			checks.Sh("sudo timedatectl set-ntp true\nsudo chronyc makestep"),
			checks.Say("Without chrony, restart systemd-timesyncd:"),
			checks.Sh("sudo systemctl restart systemd-timesyncd"),
		},
		Verify: checks.Target(checks.Say("This host's clock, and the apiserver's Date header:"),
			checks.Sh(`timedatectl status
SERVER=$(`+checks.CatalogKubectl+` config view --minify -o jsonpath='{.clusters[0].cluster.server}')
curl -skI "$SERVER/readyz" | grep -i '^date:'
date -u`)),
		Patterns: []string{
			// crypto/x509/verify.go (go1.26), CertificateInvalidError.Error for Expired.
			"x509: certificate has expired or is not yet valid: current time * is before *",
		},
		// "current time … is after" the certificate's end is a clock ahead, or a certificate
		// that really expired: clock-skew alone only with clock evidence on the line (another
		// clock's time there, five minutes or more away from it, or a current time before 2020).
		Signs: []checks.Sign{
			{Core: expiredCore, Clock: true},
			{Core: expiredCore, Endpoints: []string{checks.EndpointAPIServer}, Or: []string{"api-auth"}, Tell: expiredTell},
			{Core: expiredCore, Endpoints: []string{checks.EndpointGitLab}, Or: []string{"gitlab-reachability"}, Tell: expiredTell},
			{Core: expiredCore, Endpoints: []string{checks.EndpointKubelet}, Or: []string{"kubelet-serving"}, Tell: expiredTell},
			{Core: expiredCore, Endpoints: []string{checks.EndpointOther, checks.EndpointNone, checks.EndpointDocker, checks.EndpointDockerTLS, checks.EndpointDNS},
				Or: []string{checks.NotACheck + "the server's certificate really expired"}, Tell: expiredTell},
			// Go before 1.15 said neither time: crypto/x509 "x509: certificate has expired or is
			// not yet valid"; curl (git) "SSL certificate problem: certificate has expired".
			{Causes: []string{checks.CauseX509Validity}, Or: []string{checks.NotACheck + "the server's certificate really expired, or is not valid yet"}, Tell: expiredTell},
			// docs/faq/index.md, v16.11.0: "Job fails with `remote error: tls: bad certificate
			// (exec.go:71:0s)`": the system time changed during a job, and the certificates were
			// judged expired.
			{Core: "remote error: tls: bad certificate", Endpoints: []string{checks.EndpointNone, checks.EndpointGitLab},
				Or: []string{checks.NotACheck + "a client certificate the server does not accept"}, Tell: "clock-skew compares this host's clock with GitLab's and the apiserver's Date"},
		},
	},
	// The apiserver's Date arrives with api-auth's request, GitLab's with
	// runner-token's (and gitlab-reachability's before it): wait for them,
	// and compare whatever came.
	Requires: []checks.Node{configfacts.RunnerEntryFact, configfacts.ConfigFact, checks.Optional(checks.Ref("api-auth")), checks.Optional(kubefacts.APIClientFact),
		checks.Optional(checks.Ref("runner-token"))},
	Network: true,
	Run: func(p *checks.Pass) error {
		e := configfacts.RunnerEntryFact.Get(p)
		var seen []hostio.ServerDate
		if api := kubefacts.APIClientFact.Get(p); api != nil {
			if d, ok := p.Env.Clocks.Date(kubefacts.ClockAPIServer, api.Server); ok {
				seen = append(seen, d)
			}
		}
		if e.Runner.URL != "" {
			if t, err := configfacts.GitLabTarget(p.Env, configfacts.ConfigFact.Get(p), e.Label(), e.Runner); err == nil {
				if d, ok := p.Env.Clocks.Date(gitlab.ClockKind, t.Origin()); ok {
					seen = append(seen, d)
				}
			}
		}
		return judge(p, e.Label(), seen)
	},
}

// judge reports the clocks that disagree with this host's.
func judge(p *checks.Pass, label string, seen []hostio.ServerDate) error {
	if len(seen) == 0 {
		return checks.Skip("no answer from the apiserver or GitLab carried a Date header to compare with")
	}
	var off, fine []hostio.ServerDate
	for _, d := range seen {
		if beyond(d) >= WarnAt {
			off = append(off, d)
		} else {
			fine = append(fine, d)
		}
	}
	for _, d := range seen {
		p.Observe(checks.Observation{Name: "clock_skew_seconds", Labels: map[string]string{"server": d.Kind + " " + d.Server},
			Value: d.Skew().Seconds()})
	}
	if len(off) == 0 {
		return nil
	}
	evidence := make([]checks.Evidence, 0, len(seen))
	for _, d := range seen {
		evidence = append(evidence, checks.Evidence{Source: "Date header from " + d.Kind + " " + d.Server, Detail: describe(d)})
	}
	sev := checks.Warning
	worst := off[0]
	for _, d := range off {
		if beyond(d) > beyond(worst) {
			worst = d
		}
	}
	if beyond(worst) >= ErrorAt {
		sev = checks.Error
	}
	var cause string
	var fix checks.Steps
	switch {
	case len(off) == len(seen) && len(seen) > 1 && agree(off):
		cause = fmt.Sprintf("This host's clock is %s %s: the %s at %s and %s at %s agree with each other and not with it. "+
			"The runner judges every certificate by it, so one that is valid reads as `x509: certificate has expired or is not yet valid`.",
			human(-worst.Skew()), aheadBehind(-worst.Skew()), off[0].Kind, off[0].Server, off[1].Kind, off[1].Server)
		fix = checks.Steps{checks.Say("Synchronise this host's clock (without chrony: sudo systemctl restart systemd-timesyncd in place of the second line):"),
			checks.Sh("sudo timedatectl set-ntp true\nsudo chronyc makestep")}
	case len(fine) > 0:
		cause = fmt.Sprintf("The %s at %s has a clock %s %s of this host's, while the %s at %s agrees with it: that server's clock is wrong. "+
			"Certificates it issues or checks are judged %s off, and a short-lived one reads as `x509: certificate has expired or is not yet valid`.",
			worst.Kind, worst.Server, human(worst.Skew()), aheadBehind(worst.Skew()), fine[0].Kind, fine[0].Server, human(worst.Skew()))
		fix = checks.Steps{checks.Say(fmt.Sprintf("Synchronise the clock of the machine that serves %s with NTP; there:", worst.Server)),
			checks.Sh("sudo timedatectl set-ntp true\nsudo chronyc makestep")}
	default:
		cause = fmt.Sprintf("This host's clock and the %s's at %s disagree by %s (the server is %s); with no third clock to ask, either may be wrong. "+
			"Certificates that live 60 s to 24 h then read as `x509: certificate has expired or is not yet valid`.",
			worst.Kind, worst.Server, human(worst.Skew()), aheadBehind(worst.Skew()))
		fix = checks.Steps{checks.Say("Compare both with a trusted clock, here and on the server, then synchronise the one that is off with NTP:"),
			checks.Sh("date -u\nchronyc tracking")}
	}
	p.Report(checks.Finding{Severity: sev, Cause: label + ": " + cause, Evidence: evidence, Fix: fix})
	return nil
}

// beyond is the part of the skew the measurement cannot explain: the
// header's one-second resolution and the round trip are subtracted.
func beyond(d hostio.ServerDate) time.Duration {
	s := d.Skew()
	if s < 0 {
		s = -s
	}
	s -= time.Second + d.RTT
	if s < 0 {
		return 0
	}
	return s
}

// agree says whether the skewed servers run together (within WarnAt of
// each other, in the same direction): then the odd one out is this host.
func agree(ds []hostio.ServerDate) bool {
	for _, d := range ds[1:] {
		diff := d.Skew() - ds[0].Skew()
		if diff < 0 {
			diff = -diff
		}
		if diff >= WarnAt || (d.Skew() > 0) != (ds[0].Skew() > 0) {
			return false
		}
	}
	return true
}

func describe(d hostio.ServerDate) string {
	return fmt.Sprintf("Date %s; this host's clock read %s when it arrived (%s, round trip %s)",
		d.Date.UTC().Format(time.RFC1123), d.Local.UTC().Format(time.RFC3339), skewWords(d.Skew()), d.RTT.Round(time.Millisecond))
}

func skewWords(s time.Duration) string {
	if s.Abs() < time.Second {
		return "in step"
	}
	return "server " + human(s) + " " + aheadBehind(s)
}

func aheadBehind(s time.Duration) string {
	if s < 0 {
		return "behind"
	}
	return "ahead"
}

func human(s time.Duration) string {
	return s.Abs().Round(time.Second).String()
}
