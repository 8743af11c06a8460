package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"golang.org/x/net/http2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
)

// Admission is the apiserver's verdict on the job pod a runner would
// create: the pod sent as a create with dryRun=All, with the runner's own
// identity. The apiserver runs every step of a create on it (the mutating
// and validating admission plugins and webhooks, the pod's validation)
// and persists nothing (k8s.io/apiserver pkg/registry/generic/registry/
// dryrun.go, v0.37.2: DryRunnableStorage.Create with dryRun copies the
// object into the answer and never calls the storage's Create).
type Admission struct {
	// Pod is the pod sent, and where it stands in for a job's values.
	Pod *jobpod.Created
	// Request names the request for evidence.
	Request string
	// Admitted: the apiserver would create this pod now.
	Admitted bool
	// Refusal is the apiserver's refusal, in its words; nil when admitted
	// or when there is no verdict.
	Refusal *Refusal
	// Err is why there is no verdict: the request timed out or failed
	// before the apiserver answered.
	Err error
	// ServerGaveUp: the apiserver ended its own handling at the request's
	// timeout, a step it waited on (a slow webhook) undecided. It says so
	// with a 504, or, when the handler had begun its answer, by resetting
	// the stream (see ServerEndedIt).
	ServerGaveUp bool
	// Skipped says why no dry run was sent (namespace_per_job, a
	// namespace that cannot be one, a pod the runner cannot build either).
	Skipped string
	// Webhooks are the cluster's webhooks, read only when a webhook
	// refused the pod; NamespaceLabels the runner namespace's labels, which
	// their namespaceSelectors weigh (nil when unread).
	Webhooks        *Webhooks
	NamespaceLabels map[string]string
}

// Verdict says whether the apiserver gave one.
func (a *Admission) Verdict() bool { return a != nil && (a.Admitted || a.Refusal != nil) }

// Reached says whether the pod passed stage s: it was admitted, or refused
// at a stage the apiserver runs after s. A refused pod says nothing of the
// stages after the one that refused it.
func (a *Admission) Reached(s Stage) bool {
	switch {
	case a == nil:
		return false
	case a.Admitted:
		return true
	case a.Refusal == nil || a.Refusal.Stage == StageOther:
		return false
	}
	return a.Refusal.Stage.rank(a.Refusal.Validating) > s.rank(false)
}

// RefusedAt says whether the pod was refused at stage s.
func (a *Admission) RefusedAt(s Stage) bool {
	return a != nil && a.Refusal != nil && a.Refusal.Stage == s
}

// DryRunTimeout is the request's own bound on the apiserver (its timeout
// parameter): the apiserver ends the request, and a webhook it waits on,
// then, and answers with what it got. It stays under the call's deadline
// (facts' APITimeout, 8s) so the answer arrives before doctor gives up.
func DryRunTimeout(api time.Duration) time.Duration {
	d := (api - time.Second).Truncate(time.Second)
	if d < time.Second {
		d = time.Second
	}
	return d
}

// AdmissionFact sends each Kubernetes runner's job pod as a dry-run create:
// one request per runner. It gates on api-auth like the cluster's lists,
// so the request leaves with the self-review, in parallel with the other
// reads, not after them; a refused credential is diagnosed once.
var AdmissionFact = &checks.Fact[*Admission]{
	ID:       "job-pod-admission",
	Doc:      "the apiserver's verdict on the job pod the runner would create, asked with a dryRun=All create (nothing is persisted)",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact, configfacts.RunnerEntryFact, configfacts.ConfigFact, checks.Optional(hostfacts.VersionFact)},
	Network:  true,
	Compute: func(p *checks.Pass) (*Admission, error) {
		e := configfacts.RunnerEntryFact.Get(p)
		if e.Kube().NamespacePerJob {
			return &Admission{Skipped: "namespace_per_job is set: each job's namespace is created for it"}, nil
		}
		ns := e.Namespace()
		if err := fixcode.NamespaceName(ns); err != nil {
			return &Admission{Skipped: fmt.Sprintf("the runner's namespace %q is %v", ns, err)}, nil
		}
		version := ""
		if v := hostfacts.VersionFact.Get(p); v != nil && v.Err == nil {
			version = v.Version.Version
		}
		created, err := jobpod.AsCreated(e.Runner, ns, version)
		if err != nil {
			// The runner fails the job the same way before it asks the
			// apiserver: namespace-quota and job-identity say so.
			return &Admission{Skipped: fmt.Sprintf("the job pod cannot be built: %v", err)}, nil
		}
		api := kubefacts.APIClientFact.Get(p)
		a := &Admission{Pod: created, Request: "POST /api/v1/namespaces/" + ns + "/pods?dryRun=All"}
		ctx, cancel := context.WithTimeout(p.Context, p.CallTimeout())
		defer cancel()
		serverTimeout := DryRunTimeout(p.Env.APITimeout())
		start := time.Now()
		err = DryRunCreate(ctx, api, created.Pod, serverTimeout)
		switch r := ClassifyRefusal(err); {
		case err == nil:
			a.Admitted = true
		case r != nil:
			r.Message = WithoutGeneratedSuffix(r.Message, created.Pod.GenerateName)
			a.Refusal = r
		default:
			a.Err = err
			a.ServerGaveUp = ServerEndedIt(err, time.Since(start), serverTimeout, ctx.Err())
		}
		if r := a.Refusal; r != nil && r.Webhook != "" && r.Stage != StagePolicy {
			// Which webhook it was, where it is called and what else the
			// apiserver sends the pod: a second round trip, only for a pod a
			// webhook refused.
			wctx, wcancel := context.WithTimeout(p.Context, p.CallTimeout())
			defer wcancel()
			a.Webhooks = ReadWebhooks(p, wctx, api)
			if obj, _, err := NamespaceObject(p, wctx, api, ns, AcrossNamespaces(p)); err == nil {
				a.NamespaceLabels = obj.Labels
				if a.NamespaceLabels == nil {
					a.NamespaceLabels = map[string]string{}
				}
			}
			named := a.Webhooks.Named(r.Webhook)
			r.Validating = len(named) > 0
			for _, h := range named {
				r.Validating = r.Validating && h.Kind == "validating"
			}
		}
		return a, nil
	},
}

// DryRunCreate asks the apiserver to create pod with dryRun=All, bounded
// by ctx and, on the apiserver's side, by serverTimeout. It is the one
// create doctor's default mode sends.
func DryRunCreate(ctx context.Context, api *kubefacts.APIClient, pod *corev1.Pod, serverTimeout time.Duration) error {
	var out corev1.Pod
	// The timeout parameter alone: client-go's Request.Timeout (and the
	// client's own, which it copies, k8s.io/client-go rest/request.go,
	// v0.37.2) would also end the request on doctor's side at that instant,
	// always before the apiserver's answer arrives. ctx and the HTTP
	// client's bound, a second longer, bound doctor's wait.
	return api.Client.CoreV1().RESTClient().Post().Namespace(pod.Namespace).Resource("pods").
		Timeout(0).Param("dryRun", "All").Param("timeout", serverTimeout.String()).Body(pod).Do(ctx).Into(&out)
}

// WithoutGeneratedSuffix names the pod in a refusal as the apiserver names
// it before it generates the name: its generateName alone. The validating
// steps run after the name is generated (k8s.io/apiserver
// pkg/registry/generic/registry/store.go, v0.37.2: BeforeCreate, then the
// validating admission), and a suffix of five random characters
// (k8s.io/apiserver pkg/storage/names/generate.go: randomLength 5) would
// make every run's finding another text.
func WithoutGeneratedSuffix(msg, generateName string) string {
	if generateName == "" {
		return msg
	}
	return regexp.MustCompile(regexp.QuoteMeta(`"`+generateName)+`[a-z0-9]{5}"`).ReplaceAllString(msg, `"`+generateName+`"`)
}

// ServerEndedIt says whether err is the apiserver ending a request at its
// timeout parameter. Its timeout filter answers 504 when the handler has
// written nothing, and otherwise, to notify the client, resets the HTTP/2
// stream (k8s.io/apiserver pkg/server/filters/timeout.go, v0.37.2:
// "We have to shutdown the connection for HTTP1 or reset stream for
// HTTP2", panic(http.ErrAbortHandler)): a request the apiserver answered
// with no status, not before serverTimeout had passed, while doctor's own
// deadline (ctxErr) still held, was ended by the apiserver, which waits on
// the webhook as the runner's create would.
func ServerEndedIt(err error, elapsed, serverTimeout time.Duration, ctxErr error) bool {
	if err == nil || ctxErr != nil {
		return false
	}
	if apierrors.IsTimeout(err) {
		return true
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) || elapsed < serverTimeout {
		return false
	}
	var se http2.StreamError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
