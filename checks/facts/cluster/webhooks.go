package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// Webhook is one admission webhook of the cluster, as far as a finding
// names it: where the apiserver calls it, what it does when that fails,
// and which pods it is sent.
type Webhook struct {
	Kind          string // "validating" or "mutating"
	Configuration string // the ValidatingWebhookConfiguration's or MutatingWebhookConfiguration's name
	Name          string
	Endpoint      string // the URL, or "service NS/NAME:PORT/PATH"
	// FailurePolicy, TimeoutSeconds and SideEffects with the apiserver's
	// defaults applied (Fail, 10, and the v1 API has no default for
	// sideEffects: "" is unset).
	FailurePolicy  string
	TimeoutSeconds int32
	SideEffects    string
	// MatchConditions names the CEL conditions doctor does not evaluate.
	MatchConditions   []string
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
}

// Webhooks are the cluster's admission webhooks, read once per target.
type Webhooks struct {
	List []Webhook
	// ValidatingErr and MutatingErr say why a list is missing (403: the
	// identity may not list them).
	ValidatingErr, MutatingErr error
}

// webhookPath are the two lists, cluster-scoped.
const (
	validatingPath = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
	mutatingPath   = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
)

// WebhooksSource names the two lists for evidence.
const WebhooksSource = "GET " + validatingPath + ", " + mutatingPath

// ReadWebhooks lists the cluster's validating and mutating webhook
// configurations, once per target and run, in parallel: only a check that
// found a webhook in a refusal asks, so a run whose pods are admitted
// never sends these two requests.
func ReadWebhooks(p *checks.Pass, ctx context.Context, api *kubefacts.APIClient) *Webhooks {
	w, _ := checks.Shared(p, "webhooks "+api.Key, func() (*Webhooks, error) {
		out := &Webhooks{}
		type got struct {
			list []Webhook
			err  error
		}
		v, m := make(chan got, 1), make(chan got, 1)
		go func() {
			var l admissionv1.ValidatingWebhookConfigurationList
			err := listJSON(ctx, api, validatingPath, &l)
			var hooks []Webhook
			for _, c := range l.Items {
				for _, h := range c.Webhooks {
					hooks = append(hooks, webhookOf("validating", c.Name, h.Name, h.ClientConfig, h.FailurePolicy, h.TimeoutSeconds,
						h.SideEffects, conditions(h.MatchConditions), h.NamespaceSelector, h.ObjectSelector))
				}
			}
			v <- got{hooks, err}
		}()
		go func() {
			var l admissionv1.MutatingWebhookConfigurationList
			err := listJSON(ctx, api, mutatingPath, &l)
			var hooks []Webhook
			for _, c := range l.Items {
				for _, h := range c.Webhooks {
					hooks = append(hooks, webhookOf("mutating", c.Name, h.Name, h.ClientConfig, h.FailurePolicy, h.TimeoutSeconds,
						h.SideEffects, conditions(h.MatchConditions), h.NamespaceSelector, h.ObjectSelector))
				}
			}
			m <- got{hooks, err}
		}()
		gv, gm := <-v, <-m
		out.List, out.ValidatingErr, out.MutatingErr = append(gv.list, gm.list...), gv.err, gm.err
		return out, nil
	})
	if w == nil {
		return &Webhooks{ValidatingErr: context.Cause(ctx), MutatingErr: context.Cause(ctx)}
	}
	return w
}

func conditions(cs []admissionv1.MatchCondition) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// listJSON reads one page of a list as JSON (no typed client of doctor's
// knows the group: its answer is cut by keep like any other).
func listJSON(ctx context.Context, api *kubefacts.APIClient, path string, into any) error {
	raw, err := api.Client.CoreV1().RESTClient().Get().AbsPath(path).Param("limit", fmt.Sprint(PageSize)).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

func webhookOf(kind, config, name string, cc admissionv1.WebhookClientConfig, fp *admissionv1.FailurePolicyType, timeout *int32,
	se *admissionv1.SideEffectClass, conds []string, nsSel, objSel *metav1.LabelSelector) Webhook {
	w := Webhook{Kind: kind, Configuration: config, Name: name, FailurePolicy: string(admissionv1.Fail), TimeoutSeconds: 10,
		MatchConditions: conds, NamespaceSelector: nsSel, ObjectSelector: objSel}
	// SetDefaults_ValidatingWebhook (k8s.io/api admissionregistration/v1
	// defaults in pkg/apis/admissionregistration/v1/defaults.go, kubernetes
	// v1.37.2): failurePolicy Fail, timeoutSeconds 10.
	if fp != nil {
		w.FailurePolicy = string(*fp)
	}
	if timeout != nil {
		w.TimeoutSeconds = *timeout
	}
	if se != nil {
		w.SideEffects = string(*se)
	}
	switch {
	case cc.URL != nil:
		w.Endpoint = *cc.URL
	case cc.Service != nil:
		s := cc.Service
		port := int32(443)
		if s.Port != nil {
			port = *s.Port
		}
		path := ""
		if s.Path != nil {
			path = *s.Path
		}
		w.Endpoint = fmt.Sprintf("service %s/%s:%d%s", s.Namespace, s.Name, port, path)
	}
	return w
}

// Matching are the webhooks whose namespaceSelector and objectSelector
// select a namespace with nsLabels and a pod with podLabels. Their rules are
// not weighed (a webhook's rules embed a struct keep cannot cut: JSON
// inlines it, protobuf nests it), so a webhook of other resources may be
// among them; a webhook with matchConditions may still skip the pod (CEL,
// not evaluated here).
func (w *Webhooks) Matching(nsLabels, podLabels map[string]string) []Webhook {
	var out []Webhook
	for _, h := range w.List {
		if h.matches(nsLabels, podLabels) {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Kind > out[j].Kind }) // validating first
	return out
}

// Named is the webhooks of that name (a name is unique within its
// configuration only).
func (w *Webhooks) Named(name string) []Webhook {
	var out []Webhook
	for _, h := range w.List {
		if h.Name == name {
			out = append(out, h)
		}
	}
	return out
}

func (h Webhook) matches(nsLabels, podLabels map[string]string) bool {
	return selects(h.NamespaceSelector, nsLabels) && selects(h.ObjectSelector, podLabels)
}

// selects is a webhook's selector on a set of labels: nil or empty
// selects everything.
func selects(s *metav1.LabelSelector, l map[string]string) bool {
	if s == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false // the apiserver refuses such a configuration
	}
	return sel.Matches(labels.Set(l))
}

// Describe is the webhook as evidence names it.
func (h Webhook) Describe() string {
	parts := []string{
		fmt.Sprintf("%s webhook %q of %s", h.Kind, h.Name, h.Configuration),
		"endpoint " + h.Endpoint,
		"failurePolicy " + h.FailurePolicy,
		fmt.Sprintf("timeoutSeconds %d", h.TimeoutSeconds),
	}
	if h.SideEffects != "" {
		parts = append(parts, "sideEffects "+h.SideEffects)
	}
	if s := selectorText(h.NamespaceSelector); s != "" {
		parts = append(parts, "namespaceSelector "+s)
	}
	if s := selectorText(h.ObjectSelector); s != "" {
		parts = append(parts, "objectSelector "+s)
	}
	if len(h.MatchConditions) > 0 {
		parts = append(parts, "matchConditions "+strings.Join(h.MatchConditions, ", ")+" (not evaluated)")
	}
	return strings.Join(parts, ", ")
}

// selectorText is a selector as kubectl prints one ("a=b,c in (d)").
func selectorText(s *metav1.LabelSelector) string {
	if s == nil || len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "(invalid)"
	}
	return sel.String()
}
