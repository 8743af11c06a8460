package gitlabreach

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
)

func resolvedHere(t *gitlab.Target, sys *gitlab.Resolution) checks.Evidence {
	return checks.Evidence{Source: "resolver on this host (" + sys.Via + ")", Detail: t.Host + " -> " + gitlab.Join(sys.Addrs)}
}

// answersEvidence lists the distinct exchanges, a few of them.
func answersEvidence(res *gitlab.Resolution) []checks.Evidence {
	var ev []checks.Evidence
	seen := map[string]bool{}
	for _, a := range res.Answers {
		if d := a.String(); !seen[d] && len(ev) < 4 {
			seen[d] = true
			ev = append(ev, checks.Evidence{Source: "dns " + a.Server, Detail: d})
		}
	}
	return ev
}

func dnsFailure(t *gitlab.Target, sys *gitlab.Resolution) *checks.Finding {
	why := "no usable answer: " + sys.Why()
	if sys.Denied {
		why = "the name has no address (NXDOMAIN, or no A/AAAA record)"
	}
	return stageFinding(t, gitlab.StageDNS, t.Host+" via "+sys.Via, why,
		fmt.Sprintf("Make %s resolve on this host: check the nameservers in /etc/resolv.conf (or an /etc/hosts entry), "+
			"or set url to GitLab's external_url.", t.Host),
		answersEvidence(sys)...)
}

func connectFailure(t *gitlab.Target, sys *gitlab.Resolution, f *gitlab.Failure) *checks.Finding {
	ev := []checks.Evidence{resolvedHere(t, sys)}
	switch {
	case f.Stage == gitlab.StageTCP && gitlab.AllTailnet(sys.Addrs):
		return stageFinding(t, f.Stage, f.Addr, f.Err.Error(),
			"Bring tailscale up on this host (tailscale status) so the runner reaches GitLab over the tailnet, "+
				"or point url at a name that resolves to an address this host reaches.",
			append(ev, checks.Evidence{Source: "tcp " + f.Addr, Detail: "not dialled: " + f.Err.Error()})...)
	case f.Stage == gitlab.StageTCP:
		return stageFinding(t, f.Stage, f.Addr, f.Err.Error(),
			fmt.Sprintf("Check that GitLab listens on port %s and that nothing between here and %s drops the connection "+
				"(a firewall, GitLab's container not publishing the port, the Funnel turned off: tailscale funnel status on the GitLab host).", t.Port, t.Host),
			append(ev, checks.Evidence{Source: "tcp " + f.Addr, Detail: f.Err.Error()})...)
	case f.Cert != nil:
		ev = append(ev, checks.Evidence{Source: "tls " + f.Addr + " (server certificate)", Detail: f.Cert.Describe()})
		for _, p := range f.Cert.Problems {
			ev = append(ev, checks.Evidence{Source: "tls " + f.Addr, Detail: p})
		}
		return stageFinding(t, f.Stage, f.Addr, "the runner refuses GitLab's certificate: "+f.Err.Error(), certFix(t, f.Cert), ev...)
	case f.Files:
		return stageFinding(t, f.Stage, f.Addr, f.Err.Error(),
			"Correct the tls-ca-file, tls-cert-file and tls-key-file paths in [[runners]]: the runner reads them at every request.", ev...)
	default:
		return stageFinding(t, f.Stage, f.Addr, "no TLS handshake: "+f.Err.Error(),
			"Whatever listens there does not complete a TLS handshake: check the scheme and port of url (https to a "+
				"plain-HTTP port, or the wrong port), and what listens on it.",
			append(ev, checks.Evidence{Source: "tls " + f.Addr, Detail: f.Err.Error()})...)
	}
}

func certFix(t *gitlab.Target, c *gitlab.CertCheck) string {
	var fix []string
	for _, p := range c.Problems {
		switch {
		case strings.Contains(p, "expired"), strings.Contains(p, "not yet valid"):
			fix = append(fix, "Renew GitLab's certificate (and check this host's clock: the clock-skew check).")
		case strings.HasPrefix(p, "chain:"):
			fix = append(fix, "Set tls-ca-file in [[runners]] to the CA certificate that signed GitLab's certificate, "+
				"or install that CA in this host's system roots.")
		case strings.HasPrefix(p, "hostname:"):
			fix = append(fix, fmt.Sprintf("Set url to a name the certificate is for, or reissue the certificate for %s.", t.Host))
		}
	}
	return strings.Join(fix, " ")
}

func soonExpiry(t *gitlab.Target, c *gitlab.Conn) *checks.Finding {
	f := stageFinding(t, gitlab.StageTLS, c.Addr,
		fmt.Sprintf("GitLab's certificate expires in %s, at %s; from then every request of the runner fails with "+
			"`x509: certificate has expired`", human(c.Cert.Left), c.Cert.NotAfter.UTC().Format(time.RFC3339)),
		"Renew GitLab's certificate now, and find out why it was not renewed on its own (tailscale cert, certbot).",
		checks.Evidence{Source: "tls " + c.Addr + " (server certificate)", Detail: c.Cert.Describe()})
	f.Severity = checks.Warning
	f.Cause = strings.Replace(f.Cause, "stage failed at", "stage warns at", 1)
	return f
}

// judgeVersion reads GET /api/v4/version: it needs authentication, so a
// 401 is GitLab answering; a 200 must be its version document.
func judgeVersion(t *gitlab.Target, addr, url string, r *gitlab.Response) *checks.Finding {
	ev := checks.Evidence{Source: "GET " + url + " via " + addr, Detail: r.Line}
	var v struct {
		Version string `json:"version"`
	}
	switch {
	case r.Status == 401:
		return nil
	case r.Status == 200 && !r.Truncated && json.Unmarshal(r.Body, &v) == nil && v.Version != "":
		return nil
	case r.Status == 200:
		why := "the body is not GitLab's version document"
		if r.Truncated {
			why = gitlab.BodyTooLarge()
		}
		return stageFinding(t, gitlab.StageHTTP, addr, "200 at /api/v4/version, but "+why+": something other than GitLab answers",
			"Find what answers on this port (a proxy, a captive portal, another service) and point url at GitLab itself.", ev)
	case r.Status >= 300 && r.Status < 400:
		ev.Detail += ", Location: " + clip(r.Header.Get("Location"))
		return stageFinding(t, gitlab.StageHTTP, addr, r.Line+": the API redirects, and the runner's POSTs do not follow redirects",
			"Set url to GitLab's external_url exactly (scheme, host and port), the URL the redirect points at.", ev)
	case r.Status == 404:
		return stageFinding(t, gitlab.StageHTTP, addr, "404 at /api/v4/version: no GitLab API below this url",
			"Set url to GitLab's external_url (with its relative URL root, if it has one); a proxy in front may route /api elsewhere.", ev)
	case r.Status >= 500:
		return stageFinding(t, gitlab.StageHTTP, addr, r.Line+": GitLab is down or starting, or the proxy or Funnel in front cannot reach it",
			"Check GitLab (gitlab-ctl status in its container; docker ps on the GitLab host) and the proxy or Funnel in front of it.", ev)
	default:
		return stageFinding(t, gitlab.StageHTTP, addr, r.Line+" at /api/v4/version, where GitLab answers 401 without a token",
			"Find what answers on this port and point url at GitLab itself.", ev)
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func human(d time.Duration) string {
	if d >= 24*time.Hour {
		return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
	}
	return d.Round(time.Minute).String()
}
