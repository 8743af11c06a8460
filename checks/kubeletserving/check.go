// Package kubeletserving checks that every node's kubelet has the serving
// certificate the apiserver needs to attach to its pods. Where kubelets ask
// for it with a CSR (serverTLSBootstrap, as kubeadm and EKS set), a CSR
// nobody approves leaves a freshly rented node Ready but unattachable.
package kubeletserving

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ID names the check.
const ID = "kubelet-serving"

var Check = &checks.Check{
	ID:       ID,
	Title:    "Every Ready node's kubelet has its serving certificate",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The apiserver attaches to a job pod (exec, attach, logs) through the node's kubelet on port 10250, over " +
			"TLS with the kubelet's serving certificate. A kubelet with serverTLSBootstrap (kubeadm, EKS) asks for that " +
			"certificate with a CertificateSigningRequest for signer kubernetes.io/kubelet-serving, which nothing in " +
			"Kubernetes approves by itself. Until someone or an approver does, the node is Ready and takes pods, but its " +
			"kubelet answers every TLS handshake with an internal-error alert: on a cluster that scales from zero, that is " +
			"most first jobs. k3s issues serving certificates itself; there kubelet-reach is the test.",
		// executors/kubernetes/kubernetes.go (v19.3.0): setupTrappingScripts's
		// error is wrapped "setting up trapping scripts on emptyDir: %w", and
		// the apiserver's upgrade proxy prefixes "error dialing backend: "
		// (k8s.io/apimachinery/pkg/util/proxy/upgradeaware.go); the kubelet's
		// alert reads "remote error: tls: internal error" (Go crypto/tls).
		// "tls: internal error" is in retryNetworkErrorsGroup (kubernetes.go, v19.3.0).
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: remote error: tls: internal error" + checks.PrepareHint,
		Fix: checks.Target(
			checks.Say("Approve the node's CSR (CSR, its name: the pending kubelet-serving one of the node):"),
			checks.Sh(checks.CatalogKubectl+" get csr --field-selector spec.signerName=kubernetes.io/kubelet-serving\nCSR=csr-abcde\n"+checks.CatalogKubectl+` certificate approve "$CSR"`),
			checks.Say("Run an approver for kubelet-serving CSRs (for example postfinance/kubelet-csr-approver) so the next rented node gets its certificate without you. "+
				"So that a job waits for the kubelet instead of failing, in the runner's [[runners]] entry:"),
			checks.Toml("[runners.feature_flags]\nFF_WAIT_FOR_POD_TO_BE_REACHABLE = true")),
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl + " get csr --field-selector spec.signerName=kubernetes.io/kubelet-serving")),
		Patterns: []string{
			// executors/kubernetes/kubernetes.go, v19.3.0 ("setting up trapping scripts on emptyDir: %w").
			"setting up trapping scripts on emptyDir: error dialing backend: remote error: tls: internal error",
			// k8s.io/apimachinery pkg/util/proxy/upgradeaware.go, v0.37.2 ("error dialing backend: %v"),
			// the apiserver's proxy wording, wherever the runner wraps it.
			"error dialing backend: remote error: tls: internal error",
		},
		Signs: []checks.Sign{
			// The apiserver's TLS to a kubelet fails: a kubelet without a serving certificate
			// (remote error: tls: internal error), or one the apiserver does not trust.
			{Endpoints: []string{checks.EndpointKubelet}, Causes: []string{checks.CauseTLSRemote, checks.CauseX509Authority, checks.CauseX509Hostname}},
		},
	},
	Requires:  []checks.Node{cluster.ListsFact, cluster.CSRsFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run: func(p *checks.Pass) error {
		l := cluster.ListsFact.Get(p)
		if err := l.Err("nodes"); err != nil {
			return err
		}
		e := configfacts.RunnerEntryFact.Get(p)
		return judge(p, e.Label(), l.Nodes, cluster.CSRsFact.Get(p), runnerconfig.WaitsForReachable(e.Runner))
	},
}

// IssuesItself names the distribution when every node's kubelet gets its
// serving certificate without a CSR (k3s signs it at join), or "".
func IssuesItself(nodes []corev1.Node) string {
	if len(nodes) == 0 {
		return ""
	}
	for i := range nodes {
		if !isK3s(&nodes[i]) {
			return ""
		}
	}
	return "k3s"
}

func isK3s(n *corev1.Node) bool {
	if strings.Contains(n.Status.NodeInfo.KubeletVersion, "+k3s") || strings.HasPrefix(n.Spec.ProviderID, "k3s://") {
		return true
	}
	for k := range n.Annotations {
		if strings.HasPrefix(k, "k3s.io/") {
			return true
		}
	}
	return false
}

// StaleAfter is the age past which a Pending CSR of a node that is gone is
// only left over, not a node waiting.
const StaleAfter = time.Hour

func judge(p *checks.Pass, label string, nodes []corev1.Node, csrs *cluster.CSRs, wait runnerconfig.Waiting) error {
	if k := IssuesItself(nodes); k != "" {
		return checks.Skip("the cluster's kubelets get their serving certificates from %s itself, not through CSRs: kubelet-reach tells whether the apiserver reaches each one", k)
	}
	if csrs == nil {
		return fmt.Errorf("no CSR list")
	}
	if csrs.Err != nil {
		if apierrors.IsForbidden(csrs.Err) {
			// Without the list doctor cannot see whether a kubelet serving
			// CSR is Pending.
			return kubefacts.LacksRBAC(kubefacts.Access{Verb: "list", Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, csrs.Err)
		}
		return fmt.Errorf("listing certificatesigningrequests: %w", csrs.Err)
	}
	byName := map[string]*corev1.Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	now := p.Env.Now()
	for _, c := range newestPerNode(csrs.Items) {
		state := stateOf(&c)
		if state == "" {
			continue
		}
		node := NodeOf(&c)
		age := cluster.Age(c.CreationTimestamp.Time, now).Round(time.Second)
		ev := []checks.Evidence{{Source: "GET /apis/certificates.k8s.io/v1/certificatesigningrequests/" + c.Name,
			Detail: fmt.Sprintf("signer %s, requested by %s %s ago: %s", c.Spec.SignerName, c.Spec.Username, age, state)}}
		n, known := byName[node]
		switch {
		case known && cluster.NodeReady(n):
			p.Report(checks.Finding{
				Cause: fmt.Sprintf("%s: node %s is Ready, but its kubelet serving certificate request %s is %s (%s old): the apiserver "+
					"cannot attach to pods there, and a job placed on it fails with `error dialing backend: remote error: tls: internal error`. %s",
					label, node, c.Name, state, age, wait.Consequence()),
				Evidence: append(ev, checks.Evidence{Source: "GET /api/v1/nodes/" + node, Detail: "Ready"}),
				Fix: append(checks.Steps{approve(p, c.Name),
					checks.Say("Then run an approver for kubelet-serving CSRs (for example postfinance/kubelet-csr-approver) so every rented node gets its certificate without you.")},
					flagFix(wait)...),
			})
		case known:
			p.Report(checks.Finding{Severity: checks.Warning,
				Cause: fmt.Sprintf("%s: node %s is not Ready yet and its kubelet serving certificate request %s is %s (%s old): once Ready it "+
					"takes pods that cannot be attached, unless the CSR is approved first.", label, node, c.Name, state, age),
				Evidence: ev,
				Fix:      checks.Steps{approve(p, c.Name), checks.Say("And run an approver for kubelet-serving CSRs.")},
			})
		case age < StaleAfter:
			p.Report(checks.Finding{Severity: checks.Warning,
				Cause: fmt.Sprintf("%s: kubelet serving certificate request %s of %s is %s (%s old), and no node %s exists yet: a node "+
					"joining now will be unattachable until it is approved.", label, c.Name, "system:node:"+node, state, age, node),
				Evidence: ev,
				Fix: checks.Steps{checks.Say("Once the node is yours, approve it, and run an approver for kubelet-serving CSRs:"),
					approve(p, c.Name)},
			})
		}
	}
	return nil
}

func flagFix(w runnerconfig.Waiting) checks.Steps {
	if w.On {
		return nil
	}
	return checks.Steps{checks.Say("So that a job waits for the kubelet instead of failing, in the runner's [[runners]] entry:"),
		checks.Document(fixcode.TOML(fixcode.TOMLTable("runners.feature_flags", fixcode.KV{Key: runnerconfig.FFWaitForPodToBeReachable, Value: true})))}
}

// approve approves the CSR in the runner's cluster.
func approve(p *checks.Pass, csr string) checks.Step {
	return approveStep(cluster.ListsFact.Get(p).Kubectl(), csr)
}

// approveStep is `kubectl certificate approve NAME`. The apiserver takes
// any path segment as a CSR's name (kubernetes pkg/apis/certificates/
// validation/validation.go, v1.37.2: ValidateCertificateRequestName, "We
// don't care what you call your certificate requests."; apiserver
// pkg/registry/rest/create.go, v0.37.2: validatePathSegment), but a
// kubelet's is "csr-" and a random suffix (client-go util/certificate/
// certificate_manager.go, v0.37.2, asks with no name, and
// util/certificate/csr/csr.go sets GenerateName "csr-"). A name that is
// no object name (fixcode.ObjectName) is none a kubelet asked with: it
// gets no command, and the finding still names it.
func approveStep(kubectl fixcode.Cmd, csr string) checks.Step {
	if err := fixcode.ObjectName(csr); err != nil {
		return checks.Withheld(fmt.Errorf("the CSR's name is %w", err))
	}
	return checks.Commands(kubectl.Arg("certificate", "approve", csr))
}

// stateOf is "" for a CSR whose certificate is issued, else why not.
func stateOf(c *certv1.CertificateSigningRequest) string {
	approved := false
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case certv1.CertificateDenied:
			return "" // denied is an operator's decision, and a later CSR follows
		case certv1.CertificateFailed:
			return "Failed (" + keep.Message(cond.Message) + ")"
		case certv1.CertificateApproved:
			approved = cond.Status != corev1.ConditionFalse
		}
	}
	switch {
	case !approved:
		return "Pending (not approved)"
	case len(c.Status.Certificate) == 0:
		return "Approved but not issued (no signer for kubernetes.io/kubelet-serving signs it)"
	}
	return ""
}

// newestPerNode keeps each requester's latest CSR: a kubelet asks again
// when one goes unanswered, and an issued newer one settles the older.
func newestPerNode(all []certv1.CertificateSigningRequest) []certv1.CertificateSigningRequest {
	latest := map[string]certv1.CertificateSigningRequest{}
	for _, c := range all {
		if c.Spec.SignerName != cluster.KubeletServingSigner {
			continue
		}
		node := NodeOf(&c)
		if cur, ok := latest[node]; !ok || cur.CreationTimestamp.Before(&c.CreationTimestamp) {
			latest[node] = c
		}
	}
	out := make([]certv1.CertificateSigningRequest, 0, len(latest))
	for _, c := range latest {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return NodeOf(&out[i]) < NodeOf(&out[j]) })
	return out
}

// NodeOf is the node a serving CSR is for: the kubelet creates it as
// system:node:<name>, and the request's subject names it the same way (a
// CSR created on its behalf keeps only the subject).
func NodeOf(c *certv1.CertificateSigningRequest) string {
	if n, ok := strings.CutPrefix(c.Spec.Username, "system:node:"); ok {
		return n
	}
	if b, _ := pem.Decode(c.Spec.Request); b != nil {
		if r, err := x509.ParseCertificateRequest(b.Bytes); err == nil {
			if n, ok := strings.CutPrefix(r.Subject.CommonName, "system:node:"); ok {
				return n
			}
		}
	}
	return c.Spec.Username
}
