//go:build integration

package testenv

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Admission webhooks for the apiserver to call: real HTTPS servers on
// loopback, with a serving certificate of the env's CA (the caBundle of
// their configuration), answering admission.k8s.io/v1 AdmissionReviews as
// Gatekeeper or Kyverno would. The apiserver calls a webhook's url client
// config through its own transport, which never proxies a loopback
// address (net/http's ProxyFromEnvironment), so nothing leaves the host.

// Webhook is one webhook server.
type Webhook struct {
	URL   string // https://127.0.0.1:PORT/validate
	calls atomic.Int64
	// dryRuns counts the reviews that said dryRun: true.
	dryRuns atomic.Int64
}

// Calls is how many reviews the webhook answered, and how many of them
// were dry runs.
func (w *Webhook) Calls() (all, dryRun int64) { return w.calls.Load(), w.dryRuns.Load() }

// Decision is a webhook's answer to one review: allowed, or refused with
// the message the apiserver quotes.
type Decision struct {
	Allowed bool
	Message string
}

// StartWebhook serves decide on loopback over TLS until the test ends.
func (e *Env) StartWebhook(t testing.TB, decide func(*admissionv1.AdmissionRequest) Decision) *Webhook {
	t.Helper()
	certPEM, keyPEM := e.MintServing("127.0.0.1")
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("testenv: webhook certificate: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: webhook listener: %v", err)
	}
	w := &Webhook{URL: "https://" + ln.Addr().String() + "/validate"}
	srv := &http.Server{
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
			var review admissionv1.AdmissionReview
			if err == nil {
				err = json.Unmarshal(body, &review)
			}
			if err != nil || review.Request == nil {
				http.Error(rw, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
				return
			}
			w.calls.Add(1)
			if review.Request.DryRun != nil && *review.Request.DryRun {
				w.dryRuns.Add(1)
			}
			d := decide(review.Request)
			resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: d.Allowed}
			if !d.Allowed {
				resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: d.Message}
			}
			rw.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(rw).Encode(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
		}),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return w
}

// ValidatingWebhookFor is a webhook of pod creates at url, sent only pods
// of namespaces labelled selector, with the env's CA as its caBundle.
func (e *Env) ValidatingWebhookFor(name, url string, selector map[string]string, failure admissionregv1.FailurePolicyType) admissionregv1.ValidatingWebhook {
	none := admissionregv1.SideEffectClassNone
	timeout := int32(5)
	return admissionregv1.ValidatingWebhook{
		Name:                    name,
		ClientConfig:            admissionregv1.WebhookClientConfig{URL: &url, CABundle: e.CAPEM},
		Rules:                   []admissionregv1.RuleWithOperations{{Operations: []admissionregv1.OperationType{admissionregv1.Create}, Rule: admissionregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
		FailurePolicy:           &failure,
		SideEffects:             &none,
		TimeoutSeconds:          &timeout,
		AdmissionReviewVersions: []string{"v1"},
		NamespaceSelector:       &metav1.LabelSelector{MatchLabels: selector},
	}
}

// CreateValidatingWebhookConfiguration stores a configuration of the
// given webhooks.
func (e *Env) CreateValidatingWebhookConfiguration(name string, hooks ...admissionregv1.ValidatingWebhook) {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	_, err := e.Clientset().AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx,
		&admissionregv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}, metav1.CreateOptions{})
	e.check(err)
}

// WaitDryRun sends a dry-run create of a small pod in namespace as the
// admin until accept takes its outcome (nil: admitted), for up to 20s: the
// apiserver learns of a webhook configuration from a watch, not at once.
// It returns the last outcome.
func (e *Env) WaitDryRun(namespace string, accept func(error) bool) error {
	e.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := e.ctx()
		_, err := e.Clientset().CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		cancel()
		if accept(err) {
			return err
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("testenv: a dry-run pod in %s: %v, not the outcome awaited after 20s", namespace, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// IsRefused says err is the apiserver's refusal (any Status), not a
// transport error.
func IsRefused(err error) bool {
	_, ok := err.(apierrors.APIStatus)
	return ok
}

// StoreValidatingWebhookConfiguration writes a configuration straight
// into etcd, as JSON (the apiserver's storage decodes JSON as well as
// protobuf), past the API's validation: the only way to hold what v1 no
// longer accepts on create but an older cluster may still store, such as
// a webhook whose sideEffects are Some or Unknown.
func (e *Env) StoreValidatingWebhookConfiguration(name string, hooks ...admissionregv1.ValidatingWebhook) {
	e.t.Helper()
	obj := admissionregv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", len(name))), CreationTimestamp: metav1.Now()},
		Webhooks:   hooks,
	}
	value, err := json.Marshal(obj)
	e.check(err)
	key := "/registry/validatingwebhookconfigurations/" + name
	body, err := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key)), "value": base64.StdEncoding.EncodeToString(value)})
	e.check(err)
	ctx, cancel := e.ctx()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.EtcdURL+"/v3/kv/put", bytes.NewReader(body))
	e.check(err)
	resp, err := http.DefaultClient.Do(req)
	e.check(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		e.t.Fatalf("testenv: etcd put %s: %s: %s", key, resp.Status, b)
	}
}
