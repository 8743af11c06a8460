// Package certexpiry checks the validity window of the kubeconfig's client
// certificate against the clock (--now).
package certexpiry

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Thresholds from the guide: getKubeconfig issues at most 24 hours, or no
// expiry at all.
const (
	SoonLeft    = time.Hour
	MaxLifetime = 24 * time.Hour
)

var Check = &checks.Check{
	ID:       "cert-expiry",
	Title:    "The kubeconfig's client certificate is valid now",
	Severity: checks.Critical,
	Doc: checks.Doc{
		Cause: "The client certificate getKubeconfig issues lives as long as the user chose (60 s to 24 h) or " +
			"forever. Past its NotAfter the client certificate front answers 401 and every job fails at " +
			"authentication; rotation is downloading a new kubeconfig over the file. A certificate with no " +
			"expiry ends only when the user revokes it.",
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up credentials: Unauthorized" + checks.PrepareHint + "; or `error: You must be logged in to the server (the server has asked for the client to provide credentials)` from kubectl",
		Fix: checks.Target(
			checks.Say(kubefacts.GetKubeconfig+" Install it over the file the runner loads (CLUSTER.kubeconfig.yaml is the file getKubeconfig returned); nothing else in the runner changes:"),
			checks.Sh(`sudo install -m 0600 -o "$RUNNER_USER" ./CLUSTER.kubeconfig.yaml "$RUNNER_KUBECONFIG"`)),
		Verify: checks.Target(checks.Say("The subject and expiry of the runner's client certificate:"),
			checks.Sh(`sudo env KUBECONFIG="$RUNNER_KUBECONFIG" kubectl --context "$RUNNER_CONTEXT" config view --raw --minify -o jsonpath='{.users[0].user.client-certificate-data}' | base64 -d | openssl x509 -noout -subject -enddate`)),
		Ambiguous: []checks.Ambiguous{
			// A 401 says the credential was refused, not why (ambiguous.md §7). k8s.io/apimachinery
			// pkg/api/errors/errors.go, v0.21.1 to v0.37.2: the generic text of a 401 without a Status
			// body (a front answering itself). kube-apiserver answers with a Status whose message is
			// "Unauthorized" (k8s.io/apiserver endpoints/filters/authentication.go, v0.37.2), which
			// client-go's Result.Error returns as it is (rest/request.go): the runner prints it behind
			// its step, "prepare environment: setting up build pod: Unauthorized. Check https://…" (the
			// docs URL is shells/index.html#… up to v17.10, shells/#… since v17.11). A bare
			// "Unauthorized" is not the runner's: buildx through the GitLab agent, kubectl's "(Unauthorized)".
			{Pattern: "the server has asked for the client to provide credentials", Or: []string{"api-auth"}, Tell: unauthorizedTell},
			{Pattern: "prepare environment: *: Unauthorized. Check https://docs.gitlab.com/runner/shells/", Or: []string{"api-auth"}, Tell: unauthorizedTell},
			{Pattern: "Error cleaning up pod: Unauthorized", Or: []string{"api-auth"}, Tell: unauthorizedTell},
		},
		Signs: []checks.Sign{
			// A 401 from the API, whichever step and wording: a Status message alone ("ERROR: Job
			// failed (system failure): Unauthorized", "ERROR: Error cleaning up secrets: Unauthorized",
			// docs/faq/README.md, v13.12.0), or "401 Unauthorized" behind an API URL.
			{Endpoints: []string{checks.EndpointAPIServer}, Causes: []string{checks.CauseUnauthorized}, Or: []string{"api-auth"}, Tell: unauthorizedTell},
		},
	},
	Requires:  []checks.Node{checks.Ref("kubeconfig-file"), checks.Ref("cluster-override"), kubefacts.ClientCertFact, kubefacts.KubeContextFact, hostfacts.RunAsFact, kubefacts.FixScopeFact},
	Executors: []string{checks.Kubernetes},
	Explains:  []string{"api-auth"},
	Run:       run,
}

// unauthorizedTell is what tells the causes of a 401 apart.
const unauthorizedTell = "cert-expiry reads the runner's client certificate's NotAfter against the clock (an expired or not yet valid " +
	"certificate); api-auth makes an authenticated call with the runner's credential (a revoked or rotated token, a deleted " +
	"ServiceAccount, a credential of another cluster)"

func run(p *checks.Pass) error {
	cc := kubefacts.ClientCertFact.Get(p)
	if cc.Absent != "" {
		return checks.Skip("%s", cc.Absent)
	}
	if cc.Err != nil {
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause:    "The kubeconfig's client certificate does not parse: client-go cannot present it, and every job fails.",
			Evidence: []checks.Evidence{{Source: cc.Source, Detail: cc.Err.Error()}},
		})
		return nil
	}
	c, now := cc.Cert, p.Env.Now()
	// The health cron graphs the expiry whatever the verdict.
	p.Observe(checks.Observation{Name: "cert_expiry_timestamp_seconds", Value: float64(c.NotAfter.Unix()),
		Labels: map[string]string{"subject": "CN=" + c.Subject.CommonName}})
	renew := renewFix(p.Env, kubefacts.FixScopeFact.Get(p), kubefacts.KubeContextFact.Get(p), hostfacts.RunAsFact.Get(p))
	ev := []checks.Evidence{{Source: cc.Source, Detail: kubefacts.Describe(c)}}
	switch left := c.NotAfter.Sub(now); {
	case now.After(c.NotAfter):
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("The client certificate (CN=%s) expired at %s, %s ago: the front answers 401 and every job fails at authentication.",
				c.Subject.CommonName, stamp(c.NotAfter), human(now.Sub(c.NotAfter))),
			Evidence: ev,
			Fix:      renew,
		})
	case now.Before(c.NotBefore):
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("The client certificate (CN=%s) is not valid until %s: this host's clock is behind, or the certificate was issued by a host whose clock is ahead.",
				c.Subject.CommonName, stamp(c.NotBefore)),
			Evidence: append(ev, checks.Evidence{Source: "clock", Detail: "now " + stamp(now)}),
			Fix: checks.Steps{checks.Say("Correct the clock (clock-skew says how); what this host's clock says:"),
				checks.Sh("timedatectl status\nchronyc tracking"),
				checks.Say("Then download a new kubeconfig if it still fails.")},
		})
	case left < SoonLeft:
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause:    fmt.Sprintf("The client certificate (CN=%s) expires in %s, at %s: jobs start failing with 401 then.", c.Subject.CommonName, human(left), stamp(c.NotAfter)),
			Evidence: ev,
			Fix:      append(renew, checks.Say("Do it now, or use one with no expiry for a long-lived runner (revoke it when the runner goes).")),
		})
	}
	if life := c.NotAfter.Sub(c.NotBefore); life > MaxLifetime {
		p.Report(checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("The client certificate is valid for %s (to %s): longer than the 24 hours getKubeconfig otherwise issues, "+
				"so revocation is the only end of this cluster-admin credential.", human(life), stamp(c.NotAfter)),
			Evidence: ev,
			Fix:      checks.Text("None for a long-lived runner; revoke the certificate when the runner goes."),
		})
	}
	if !slices.Contains(c.Subject.Organization, kubefacts.OwnersGroup) {
		p.Report(checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("The client certificate's groups are [%s], not %s: it is not a gateway owner certificate, so "+
				"cluster-admin is not given by construction.", groupsText(c.Subject.Organization), kubefacts.OwnersGroup),
			Evidence: ev,
			Fix:      checks.Text("None if this identity has its own RBAC; otherwise use the kubeconfig getKubeconfig returned."),
		})
	}
	return nil
}

// renewFix installs a new kubeconfig over the file the runner loads, for
// its user: the guide's rotation, with this host's path, when the file is
// the runner's own (kubefacts.FixScope); else the steps say why no command.
func renewFix(env *hostio.Env, scope *kubefacts.FixScope, k *kubefacts.KubeContext, ra *hostfacts.RunAs) checks.Steps {
	if k == nil || k.Kubeconfig == nil || len(k.Kubeconfig.Files) == 0 {
		return checks.Text(kubefacts.GetKubeconfig + " Install it over the kubeconfig the runner loads; nothing else in the runner changes.")
	}
	// The file client-go took the user from (LocationOfOrigin): not the
	// list's first file, which client-go skips when it is missing, nor
	// another file of the list that holds only the cluster.
	file := k.Origins(env).User
	if file == "" {
		return checks.Text(kubefacts.GetKubeconfig + " Install it over the kubeconfig the runner loads; nothing else in the runner changes.")
	}
	if path.IsAbs(file) {
		file = path.Clean(file) // the path scope.Path judges is the one installed over
	}
	return kubefacts.InstallKubeconfig(scope, file, ra)
}

func groupsText(gs []string) string {
	if len(gs) == 0 {
		return "no groups"
	}
	return strings.Join(gs, ", ")
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04Z") }

// human is a duration an operator reads at a glance: "3h20m", "2d4h", "45s".
func human(d time.Duration) string {
	switch {
	case d >= 100*365*24*time.Hour:
		return fmt.Sprintf("%d years", int(d.Hours()/24/365))
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
	case d >= time.Hour:
		return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
	}
	return d.Truncate(time.Second).String()
}
