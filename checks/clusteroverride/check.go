// Package clusteroverride finds settings that make the executor ignore the
// kubeconfig or fail at job time.
package clusteroverride

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

var Check = &checks.Check{
	ID:       "cluster-override",
	Title:    "Nothing overrides the kubeconfig's cluster",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "getKubeClientConfig takes the out-of-cluster branch whenever [runners.kubernetes] host is non-empty, " +
			"and then never reads the kubeconfig; with host empty it tries in-cluster config first, which wins " +
			"whenever KUBERNETES_SERVICE_HOST and _PORT are in the runner's environment and its service-account token can be read. With host set, cert_file without key_file " +
			"or ca_file decodes fine and fails only when a job starts; with host empty the three are never read. " +
			"A kind or k3d context left current in a kubeconfig that also holds the kcp mount sends every job to a cluster on the runner's own host.",
		// The guide's row (runner-gateway-cluster, "Failure modes").
		Symptom: "The runner talks to the wrong cluster, or to a cluster on its own host; or every job fails with \"ca file, cert file and key file must be specified when using file based auth\".",
		Fix:     checks.Text("Remove host, cert_file, key_file and ca_file from [runners.kubernetes] (the kubeconfig carries them), and do not run the kubeconfig-shaped runner inside a pod."),
		Verify: checks.Target(checks.Sh(`sudo grep -nE '^\s*(host|cert_file|key_file|ca_file)\s*=' "$RUNNER_CONFIG"
doctor run --only cluster-override`)),
		Patterns: []string{
			// executors/kubernetes/util.go, v19.3.0 (getOutClusterClientConfig).
			"ca file, cert file and key file must be specified when using file based auth",
		},
	},
	Requires:  []checks.Node{configfacts.RunnerEntryFact, hostfacts.EnvironFact, kubefacts.InClusterFact, kubefacts.KubeconfigFact, kubefacts.EffectiveClusterFact},
	Executors: []string{checks.Kubernetes},
	Settings:  []*checks.Setting{ExpectKcpMount},
	Run:       run,
}

// ExpectKcpMount is the operator saying every Kubernetes runner is meant
// to talk to a kcp mount: without it, doctor expects the mount only when
// the kubeconfig holds one the runner does not use.
var ExpectKcpMount = &checks.Setting{Name: "expect-kcp-mount",
	Usage: "whether every Kubernetes runner is meant to talk to a kcp mount URL (`BOOL`), so a cluster on the runner's own host is an error (default: only when the kubeconfig holds a kcp mount the runner does not use)"}

func run(p *checks.Pass) error {
	e := configfacts.RunnerEntryFact.Get(p)
	env := hostfacts.EnvironFact.Get(p)
	kubeconfigSet := false
	if env.Err == nil {
		v, ok := env.Lookup("KUBECONFIG")
		kubeconfigSet = ok && v != ""
	}
	k, label := e.Kube(), e.Label()
	if k.Host != "" {
		src, line := e.At("kubernetes", "host")
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s sets host = %q: the executor takes the out-of-cluster branch and never reads the kubeconfig.", label, redact.StripUserinfo(k.Host)),
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix:      checks.Text("Remove host (and cert_file, key_file, ca_file) from [runners.kubernetes]; the kubeconfig carries the URL and the certificate."),
		})
	}
	// getOutClusterClientConfig is the only reader of the three files, and
	// only host selects it: with host empty they are dead settings.
	if k.Host == "" && (k.CertFile != "" || k.KeyFile != "" || k.CAFile != "") {
		key := "cert_file"
		switch {
		case k.CertFile != "":
		case k.KeyFile != "":
			key = "key_file"
		default:
			key = "ca_file"
		}
		src, line := e.At("kubernetes", key)
		p.Report(checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("%s sets %s with host empty: the executor loads the kubeconfig and never reads "+
				"cert_file, key_file or ca_file, so the setting has no effect.", label, key),
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix:      checks.Text("Remove cert_file, key_file and ca_file from [runners.kubernetes]; the kubeconfig carries the certificate and the CA."),
		})
	}
	if k.Host != "" && k.CertFile != "" && (k.KeyFile == "" || k.CAFile == "") {
		src, line := e.At("kubernetes", "cert_file")
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s sets cert_file without key_file or ca_file: config.toml decodes, and every job fails with "+
				"\"ca file, cert file and key file must be specified when using file based auth\".", label),
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix:      checks.Text("Remove cert_file (the kubeconfig carries the certificate), or set all three of cert_file, key_file and ca_file."),
		})
	}
	if k.Host != "" && p.Env.KubeconfigPath == "" {
		hostCredentials(p, e, label)
	}
	if err := wrongCluster(p, e); err != nil {
		return err
	}
	ic := kubefacts.InClusterFact.Get(p)
	if host := ic.HostPort; ic.Vars() && k.Host == "" && ic.Config == nil {
		// rest.InClusterConfig fails on the token alone, and the runner
		// then loads the kubeconfig (guessClientConfig,
		// executors/kubernetes/util.go, v19.3.0).
		kc := kubefacts.KubeconfigFact.Get(p)
		then := "the runner loads the kubeconfig instead: " + kc.Source + "."
		if kc.None != "" {
			then = "the runner loads the kubeconfig instead, and there is none: " + kc.None + "."
		}
		f := checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("%s: KUBERNETES_SERVICE_HOST=%s is in the runner's environment, but in-cluster config fails "+
				"because the service-account token cannot be read, so %s", label, host, then),
			Evidence: []checks.Evidence{
				{Source: env.Source, Detail: "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT: " + host},
				{Source: hostfacts.ServiceAccountDir + "/token", Detail: ic.TokenErr.Error()},
			},
			Fix: checks.Text("None if the kubeconfig is the cluster meant; for in-cluster config, mount the service account's token (automountServiceAccountToken)."),
		}
		if kc.None != "" {
			// Nothing to fall back to: every job fails, and the token is
			// why (runner-kubeconfig-env's "no configuration" folds here).
			f.Severity = checks.Error
			f.Cause += " Every job fails with \"invalid configuration: no configuration has been provided\"."
			f.Fix = checks.Text("Mount the runner's service-account token: set automountServiceAccountToken: true in the runner Deployment's pod spec " +
				"(or remove automountServiceAccountToken: false from its ServiceAccount), and let the pod restart.")
		}
		p.Report(f)
	}
	if host := ic.HostPort; ic.Config != nil && k.Host == "" {
		f := checks.Finding{
			Cause: fmt.Sprintf("%s: KUBERNETES_SERVICE_HOST=%s is in the runner's environment, so in-cluster config is tried "+
				"first and wins: the runner places jobs in the cluster it runs in.", label, host),
			Evidence: []checks.Evidence{{Source: env.Source, Detail: "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT: " + host}},
		}
		if kubeconfigSet {
			f.Cause += " The KUBECONFIG the process also has is never read."
			f.Fix = checks.Text("Run the kubeconfig-shaped runner outside the cluster, or unset KUBERNETES_SERVICE_HOST in its environment.")
		} else {
			f.Severity = checks.Info
			f.Cause += " That is the in-cluster runner shape; it is right when that cluster is the one meant."
			f.Fix = checks.Text("None if the runner is meant to run jobs in its own cluster.")
		}
		p.Report(f)
	}
	return nil
}

// hostCredentials asks client-go what it makes of ca_file, cert_file and
// key_file when host is set (kubefacts.HostTransport): a file the runner cannot
// read, or client-go's refusal of what they hold, in its words. cert_file
// without the other two is the finding above.
func hostCredentials(p *checks.Pass, e *configfacts.RunnerEntry, label string) {
	k := e.Kube()
	t := kubefacts.HostTransport(e.File.Files, k)
	key := "ca_file"
	if k.CertFile != "" && !strings.Contains(fmt.Sprint(t.Err), "root certificates") && !strings.Contains(fmt.Sprint(t.ReadErr), "ca_file") {
		key = "cert_file"
	}
	src, line := e.At("kubernetes", key)
	switch {
	case t.ReadErr != nil:
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s sets host, and a file of its credentials cannot be read as the runner reads it: %v. client-go fails when the runner builds its client, and every job fails.", label, t.ReadErr),
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix:      checks.Text("Point ca_file, cert_file and key_file at regular files the runner's user can read, or remove host and the three keys and let the kubeconfig carry them."),
		})
	case t.Err != nil && t.Stage != kubefacts.StageClientConfig:
		how := fmt.Sprintf("client-go refuses to build the runner's client from them: %v. Every job fails with `%s`.", t.Err, t.JobLogWords())
		if t.Stage == kubefacts.StageHandshake {
			how = fmt.Sprintf("client-go builds the runner's client, and then every TLS handshake with the apiserver fails: %v. Every job fails at its first call to the API.", t.Err)
		}
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s sets host with ca_file, cert_file and key_file, and %s", label, how),
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix: checks.Text("cert_file and key_file must be one certificate and its key, each a PEM block of its type (CERTIFICATE; a PRIVATE KEY), " +
				"and ca_file the CA of the apiserver's certificate; or remove host and the three keys and let the kubeconfig carry them."),
		})
	}
}
