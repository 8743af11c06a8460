package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// NamespaceQuotaObjects is what a runner namespace holds that namespace-quota
// weighs a job pod against: its ResourceQuotas and LimitRanges, and the
// Secrets and ConfigMaps (metadata only) where a quota counts them.
type NamespaceQuotaObjects struct {
	Quotas           []corev1.ResourceQuota
	Ranges           []corev1.LimitRange
	QuotaErr, LRErr  error
	Secrets, Configs []metav1.PartialObjectMetadata
	SecErr, CMErr    error
}

func listNamespaceQuota(ctx context.Context, api *kubefacts.APIClient, ns string) *NamespaceQuotaObjects {
	return withCounted(ctx, api, ns, listQuotas(ctx, api, ns))
}

// listQuotas lists the ResourceQuotas and LimitRanges of ns, or of every
// namespace when ns is "".
func listQuotas(ctx context.Context, api *kubefacts.APIClient, ns string) *NamespaceQuotaObjects {
	o := &NamespaceQuotaObjects{}
	core := api.Client.CoreV1()
	var wg sync.WaitGroup
	wg.Go(func() {
		r, err := core.ResourceQuotas(ns).List(ctx, metav1.ListOptions{Limit: PageSize})
		if o.QuotaErr = err; err == nil {
			o.Quotas = r.Items
		}
	})
	wg.Go(func() {
		r, err := core.LimitRanges(ns).List(ctx, metav1.ListOptions{Limit: PageSize})
		if o.LRErr = err; err == nil {
			o.Ranges = r.Items
		}
	})
	wg.Wait()
	return o
}

// inNamespace is ns's part of a cluster-wide listQuotas.
func (all *NamespaceQuotaObjects) inNamespace(ns string) *NamespaceQuotaObjects {
	o := &NamespaceQuotaObjects{}
	for _, q := range all.Quotas {
		if q.Namespace == ns {
			o.Quotas = append(o.Quotas, q)
		}
	}
	for _, r := range all.Ranges {
		if r.Namespace == ns {
			o.Ranges = append(o.Ranges, r)
		}
	}
	return o
}

// withCounted adds to o the objects a quota of ns counts, when one does.
func withCounted(ctx context.Context, api *kubefacts.APIClient, ns string, o *NamespaceQuotaObjects) *NamespaceQuotaObjects {
	var wg sync.WaitGroup
	// Secrets and ConfigMaps are listed only where a quota counts them,
	// names and owners only: a metadata list never carries a Secret's data.
	if _, _, name := QuotaOn(o.Quotas, "secrets"); name != "" {
		wg.Go(func() { o.Secrets, o.SecErr = metadataList(ctx, api, ns, "secrets") })
	}
	if _, _, name := QuotaOn(o.Quotas, "configmaps"); name != "" {
		wg.Go(func() { o.Configs, o.CMErr = metadataList(ctx, api, ns, "configmaps") })
	}
	wg.Wait()
	return o
}

// metadataList lists objects as PartialObjectMetadata (the apiserver's
// as=PartialObjectMetadataList), one page.
func metadataList(ctx context.Context, api *kubefacts.APIClient, ns, resource string) ([]metav1.PartialObjectMetadata, error) {
	raw, err := api.Client.CoreV1().RESTClient().Get().Namespace(ns).Resource(resource).
		Param("limit", fmt.Sprint(PageSize)).
		SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").
		DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var l metav1.PartialObjectMetadataList
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("decoding %s metadata: %w", resource, err)
	}
	return l.Items, nil
}

// QuotaOn finds a quota counting the resource (count/secrets or secrets).
func QuotaOn(quotas []corev1.ResourceQuota, resource string) (hard, used int64, name string) {
	for i := range quotas {
		q := &quotas[i]
		for _, n := range []corev1.ResourceName{corev1.ResourceName("count/" + resource), corev1.ResourceName(resource)} {
			if h, ok := Hard(q)[n]; ok {
				u := q.Status.Used[n]
				return h.Value(), u.Value(), q.Name
			}
		}
	}
	return 0, 0, ""
}

// Hard is what a quota enforces: its status once the quota controller has
// seen it, else its spec.
func Hard(q *corev1.ResourceQuota) corev1.ResourceList {
	if len(q.Status.Hard) > 0 {
		return q.Status.Hard
	}
	return q.Spec.Hard
}

// NamespaceQuotaObjectsFact lists the runner namespace's ResourceQuotas and LimitRanges
// once per target and namespace. It is a fact of its own, gated on api-auth
// rather than behind the cluster lists the check also reads, so its
// requests leave with the self-review, in the same round trip.
var NamespaceQuotaObjectsFact = &checks.Fact[*NamespaceQuotaObjects]{
	ID:       "namespace-quota-objects",
	Doc:      "the runner namespace's ResourceQuotas and LimitRanges, listed once per target and namespace",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact, configfacts.RunnerEntryFact, configfacts.ConfigFact},
	Network:  true,
	Compute: func(p *checks.Pass) (*NamespaceQuotaObjects, error) {
		e := configfacts.RunnerEntryFact.Get(p)
		if e.Kube().NamespacePerJob {
			return nil, nil // the check skips; nothing to list
		}
		api, ns := kubefacts.APIClientFact.Get(p), e.Namespace()
		ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
		defer cancel()
		if AcrossNamespaces(p) {
			// Runners in several namespaces: two lists for the cluster, not
			// two per namespace, unless the identity may not list them.
			all, _ := checks.Shared(p, "quota "+api.Key+" all", func() (*NamespaceQuotaObjects, error) { return listQuotas(ctx, api, ""), nil })
			if !apierrors.IsForbidden(all.QuotaErr) && !apierrors.IsForbidden(all.LRErr) {
				if err := errors.Join(all.QuotaErr, all.LRErr); err != nil {
					return &NamespaceQuotaObjects{QuotaErr: all.QuotaErr, LRErr: all.LRErr}, nil
				}
				return checks.Shared(p, "quota "+api.Key+" ns "+ns, func() (*NamespaceQuotaObjects, error) {
					return withCounted(ctx, api, ns, all.inNamespace(ns)), nil
				})
			}
		}
		return checks.Shared(p, "quota "+api.Key+" ns "+ns, func() (*NamespaceQuotaObjects, error) { return listNamespaceQuota(ctx, api, ns), nil })
	},
}
