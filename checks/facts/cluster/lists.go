// Package cluster holds the facts that need an authenticated API: the shared
// lists every cluster check reads. They require api-auth, so a refused
// credential is diagnosed once instead of failing every list.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// PageSize is the limit of every list request: 1,000, twice kubectl's
// --chunk-size, so a cluster of a thousand nodes lists its nodes, its
// runner pods and kube-system's pods in one page each. Every page after
// the first waits for the one before: at 500, three of them stood on a 10k
// run's critical path (bench/RESULTS.md). A page past the per-response
// bound (kubefacts.MaxResponseBytes, 16 KiB an object at this size: pods with
// large annotations) is asked again at a quarter of the size, so fat objects cost
// requests, not the list.
const PageSize = 1000

// Lists are the cluster state every API check reads, listed once per run:
// each request independent of the others goes out in parallel, and each list
// is paginated.
type Lists struct {
	// api is the runner's API client: Kubectl reads its command.
	api           *kubefacts.APIClient
	Namespace     string // the runner namespace
	RunnerPods    []corev1.Pod
	PendingPods   []corev1.Pod // cluster-wide, status.phase=Pending
	Nodes         []corev1.Node
	PendingEvents map[string][]corev1.Event // Warning events of the runner namespace's Pending pods, by "<ns>/<name>"
	// PodEvents are the Warning events of every pod of the runner
	// namespace, by pod name, including pods already gone: an eviction or
	// a preemption outlives the job pod the runner deleted (events live an
	// hour by default). The same list as PendingEvents, no extra request.
	PodEvents       map[string][]corev1.Event
	PriorityClasses []schedv1.PriorityClass
	// Errs holds the list that failed, by name: a check that needs it
	// returns the error (unknown); the others still run.
	Errs map[string]error
}

// ListsFact needs api-auth to have passed: listing with a credential the
// server refuses would only repeat its 401 five times. Runners that share a
// target share its cluster-wide lists, and those of a namespace they share.
var ListsFact = &checks.Fact[*Lists]{
	ID:       "cluster-lists",
	Doc:      "runner-namespace pods, Pending pods, nodes, their events and priority classes, listed once per target and namespace",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact, configfacts.RunnerEntryFact, configfacts.ConfigFact},
	Network:  true,
	Compute: func(p *checks.Pass) (*Lists, error) {
		api, ns := kubefacts.APIClientFact.Get(p), configfacts.RunnerEntryFact.Get(p).Namespace()
		// With runners in several namespaces the Warning events are listed
		// once for the whole cluster, so each extra namespace costs one list
		// (its pods), not two; one namespace keeps the smaller list.
		eventsNS := ns
		if AcrossNamespaces(p) {
			eventsNS = ""
		}
		ctx, cancel := context.WithTimeout(p.Context, 15*time.Second)
		defer cancel()
		var wide *clusterLists
		var local *namespaceLists
		var events *eventList
		var wg sync.WaitGroup
		wg.Go(func() {
			wide, _ = checks.Shared(p, "lists "+api.Key, func() (*clusterLists, error) { return listCluster(ctx, api), nil })
		})
		wg.Go(func() {
			local, _ = checks.Shared(p, "pods "+api.Key+" ns "+ns, func() (*namespaceLists, error) { return listPods(ctx, api, ns), nil })
		})
		wg.Go(func() {
			events, _ = checks.Shared(p, "events "+api.Key+" ns "+eventsNS, func() (*eventList, error) { return listEvents(ctx, api, eventsNS), nil })
		})
		wg.Wait()
		if events != nil && eventsNS == "" && apierrors.IsForbidden(events.err) {
			// An identity scoped to its namespace may not list the cluster's
			// events: its own namespace's are what it needs.
			events, _ = checks.Shared(p, "events "+api.Key+" ns "+ns, func() (*eventList, error) { return listEvents(ctx, api, ns), nil })
		}
		if wide == nil || local == nil || events == nil {
			return nil, fmt.Errorf("listing: %w", context.Cause(ctx))
		}
		l := join(ns, wide, local, events)
		l.api = api
		return l, nil
	},
}

// namespaces counts the distinct namespaces of the Kubernetes runners.
func namespaces(c *configfacts.ConfigFile) int { return len(RunnerNamespaces(c)) }

// RunnerNamespaces are the distinct namespaces of the Kubernetes runners,
// sorted: a choice made from them is the same on every run and on replay.
func RunnerNamespaces(c *configfacts.ConfigFile) []string {
	if !c.Decoded() {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range c.Config.Runners {
		if ns := configfacts.NamespaceOf(r); checks.NormalizeExecutor(r.Executor) == checks.Kubernetes && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// clusterLists are what every runner of a target sees alike.
type clusterLists struct {
	pending, nodes, priority error
	PendingPods              []corev1.Pod
	Nodes                    []corev1.Node
	PriorityClasses          []schedv1.PriorityClass
}

// namespaceLists are one runner namespace's pods.
type namespaceLists struct {
	pods       error
	RunnerPods []corev1.Pod
}

// eventList are the Warning events of pods, of one namespace or ("") all.
type eventList struct {
	err    error
	Events []corev1.Event
}

// listCluster reads the three lists no namespace or label narrows:
//
//   - Pending pods, every namespace's, by field selector (status.phase=Pending):
//     scale-to-zero asks whether anything non-job waits for a node,
//     pending-no-node why a job pod waits;
//   - nodes, all of them: node-local-dns judges every node (its label and its
//     DNS pod), scale-to-zero every node's job pods, pending-unschedulable
//     the largest a node offers, kubelet-reach samples them, node-arch,
//     helper-image, job-terminations, kubelet-serving and pending-no-node read them;
//   - priority classes (scale-to-zero's pause pods' class), cluster-scoped.
func listCluster(ctx context.Context, api *kubefacts.APIClient) *clusterLists {
	l := &clusterLists{}
	core := api.Client.CoreV1()
	var wg sync.WaitGroup
	wg.Go(func() {
		l.pending = pages(ctx, func(o metav1.ListOptions) (string, error) {
			r, err := core.Pods("").List(ctx, o)
			if err != nil {
				return "", err
			}
			l.PendingPods = appendPage(l.PendingPods, r.Items)
			return r.Continue, nil
		}, metav1.ListOptions{FieldSelector: "status.phase=Pending"})
	})
	wg.Go(func() {
		l.nodes = pages(ctx, func(o metav1.ListOptions) (string, error) {
			r, err := core.Nodes().List(ctx, o)
			if err != nil {
				return "", err
			}
			l.Nodes = appendPage(l.Nodes, r.Items)
			return r.Continue, nil
		}, metav1.ListOptions{})
	})
	wg.Go(func() {
		l.priority = pages(ctx, func(o metav1.ListOptions) (string, error) {
			r, err := api.Client.SchedulingV1().PriorityClasses().List(ctx, o)
			if err != nil {
				return "", err
			}
			l.PriorityClasses = append(l.PriorityClasses, r.Items...)
			return r.Continue, nil
		}, metav1.ListOptions{})
	})
	wg.Wait()
	return l
}

// listPods lists the runner namespace's pods, all of them: the job pods
// (image-pull, pending-unschedulable, job-terminations, kubelet-reach's
// fallback reads) and what else runs there (namespace-quota counts it).
func listPods(ctx context.Context, api *kubefacts.APIClient, ns string) *namespaceLists {
	l := &namespaceLists{}
	l.pods = pages(ctx, func(o metav1.ListOptions) (string, error) {
		r, err := api.Client.CoreV1().Pods(ns).List(ctx, o)
		if err != nil {
			return "", err
		}
		l.RunnerPods = appendPage(l.RunnerPods, r.Items)
		return r.Continue, nil
	}, metav1.ListOptions{})
	return l
}

// listEvents lists the Warning events of pods, in parallel with the rest:
// the checks read them for Pending job pods (FailedScheduling, pull
// errors). Cluster-wide Warning events can run to thousands on a real
// cluster, so they are listed cluster-wide only when runners use several
// namespaces.
func listEvents(ctx context.Context, api *kubefacts.APIClient, ns string) *eventList {
	l := &eventList{}
	l.err = pages(ctx, func(o metav1.ListOptions) (string, error) {
		r, err := api.Client.CoreV1().Events(ns).List(ctx, o)
		if err != nil {
			return "", err
		}
		l.Events = appendPage(l.Events, r.Items)
		return r.Continue, nil
	}, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,type=Warning"})
	return l
}

// join is one runner's view: the shared lists, read only, and its own
// namespace's events of Pending pods.
func join(ns string, wide *clusterLists, local *namespaceLists, events *eventList) *Lists {
	l := &Lists{
		Namespace: ns, RunnerPods: local.RunnerPods, PendingPods: wide.PendingPods, Nodes: wide.Nodes,
		PriorityClasses: wide.PriorityClasses, PendingEvents: map[string][]corev1.Event{}, PodEvents: map[string][]corev1.Event{},
		Errs: map[string]error{},
	}
	for name, err := range map[string]error{"runner pods": local.pods, "events": events.err,
		"pending pods": wide.pending, "nodes": wide.nodes, "priorityclasses": wide.priority} {
		if err != nil {
			l.Errs[name] = kubefacts.LacksRBAC(listAccess(name, ns), err)
		}
	}
	pending := map[string]bool{}
	for _, p := range l.PendingPods {
		pending[p.Namespace+"/"+p.Name] = true
	}
	for _, e := range events.Events {
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		if e.InvolvedObject.Namespace != ns {
			continue
		}
		if pending[key] {
			l.PendingEvents[key] = append(l.PendingEvents[key], e)
		}
		l.PodEvents[e.InvolvedObject.Name] = append(l.PodEvents[e.InvolvedObject.Name], e)
	}
	return l
}

// pages follows continue tokens with limit=PageSize; it stops at 1000 pages
// so a server that never ends a list cannot hold a run forever.
func pages(ctx context.Context, list func(metav1.ListOptions) (string, error), o metav1.ListOptions) error {
	o.Limit = PageSize
	for i := 0; i < 1000; i++ {
		next, err := list(o)
		var tooLarge *kubefacts.ErrBodyTooLarge
		if errors.As(err, &tooLarge) && !tooLarge.Run && !tooLarge.InFlight && o.Limit == PageSize {
			// The same page again, a quarter of the size (64 KiB an object),
			// once: a server whose every answer is endless (a hostile one)
			// costs one more bounded read, not a descent.
			o.Limit = PageSize / 4
			continue
		}
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		o.Continue = next
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return fmt.Errorf("more than %d pages", 1000)
}

// Err returns the error of a named list, for a check that needs it: the
// check is unknown. A list the identity may not read (the view ClusterRole
// lists no nodes, a Role-scoped service account nothing cluster-wide) says
// the RBAC it lacks (kubefacts.RBACError): the credential may be scoped by
// design, but the check proved nothing, so it is not skipped.
func (l *Lists) Err(names ...string) error {
	for _, n := range names {
		if err := l.Errs[n]; err != nil {
			var denied *kubefacts.RBACError
			if errors.As(err, &denied) {
				return err
			}
			return fmt.Errorf("listing %s: %w", n, err)
		}
	}
	return nil
}

// listAccess is the access each shared list needs. The events are the
// runner namespace's: a cluster-wide list that is refused falls back to
// them (ListsFact).
func listAccess(name, ns string) kubefacts.Access {
	switch name {
	case "runner pods":
		return kubefacts.Access{Verb: "list", Resource: "pods", Namespace: ns}
	case "events":
		return kubefacts.Access{Verb: "list", Resource: "events", Namespace: ns}
	case "pending pods":
		return kubefacts.Access{Verb: "list", Resource: "pods"}
	case "priorityclasses":
		return kubefacts.Access{Verb: "list", Group: "scheduling.k8s.io", Resource: "priorityclasses"}
	}
	return kubefacts.Access{Verb: "list", Resource: name}
}

// Nodes are the nodes of api's target, from the same shared list ListsFact
// reads: whichever asks first lists them, once per target. It is for a check
// that also applies to runners of other executors and so cannot require
// ListsFact, whose api-auth requirement would diagnose a kubeconfig those
// runners do not have (helper-image, for the Docker and Kubernetes
// executors). The caller gates it on an authenticated identity
// (kubefacts.IdentityFact), as ListsFact is gated on api-auth.
func Nodes(p *checks.Pass, api *kubefacts.APIClient) ([]corev1.Node, error) {
	ctx, cancel := context.WithTimeout(p.Context, 15*time.Second)
	defer cancel()
	wide, err := checks.Shared(p, "lists "+api.Key, func() (*clusterLists, error) { return listCluster(ctx, api), nil })
	if err != nil {
		return nil, err
	}
	if wide.nodes != nil {
		return nil, fmt.Errorf("listing nodes: %w", kubefacts.LacksRBAC(listAccess("nodes", ""), wide.nodes))
	}
	return wide.Nodes, nil
}

// Kubectl is the kubectl command aimed at the runner's cluster, for fixes
// (kubefacts.APIClient.Kubectl).
func (l *Lists) Kubectl() fixcode.Cmd {
	if l == nil {
		return fixcode.Command("kubectl")
	}
	return l.api.Kubectl()
}
