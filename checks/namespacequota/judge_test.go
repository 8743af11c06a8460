package namespacequota

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
)

func guidePod(t *testing.T, mutate func(k *runnerconfig.Kubernetes)) *corev1.Pod {
	t.Helper()
	k := &runnerconfig.Kubernetes{CPURequest: "100m", MemoryRequest: "128Mi", CPULimit: "10", MemoryLimit: "20Gi",
		HelperCPURequest: "100m", HelperMemoryRequest: "128Mi", HelperCPULimit: "1", HelperMemoryLimit: "1Gi"}
	if mutate != nil {
		mutate(k)
	}
	pod, err := jobpod.Pod(k, jobpod.Flags{}, jobpod.Configured)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

func quota(hard, used corev1.ResourceList) corev1.ResourceQuota {
	return corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: "compute"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

func rlist(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestQuotaSmallerThanOneJobPod(t *testing.T) {
	rs := QuotaRefusals(guidePod(t, nil), []corev1.ResourceQuota{quota(rlist("limits.memory", "16Gi"), nil)})
	if len(rs) != 1 || !rs[0].Always {
		t.Fatalf("refusals %+v, want one that can never fit", rs)
	}
	// build 20Gi + helper 1Gi; the init container's 1Gi is not more.
	want := "exceeded quota: compute, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi"
	if rs[0].Message != want {
		t.Errorf("message\n %s\nwant\n %s", rs[0].Message, want)
	}
}

func TestQuotaUsedUp(t *testing.T) {
	rs := QuotaRefusals(guidePod(t, nil), []corev1.ResourceQuota{quota(rlist("pods", "2", "requests.cpu", "4"), rlist("pods", "2", "requests.cpu", "200m"))})
	if len(rs) != 1 || rs[0].Always || !strings.Contains(rs[0].Message, "requested: pods=1, used: pods=2, limited: pods=2") {
		t.Fatalf("refusals %+v, want pods exhausted now", rs)
	}
}

func TestQuotaNeedsLimitsTheHelperLacks(t *testing.T) {
	pod := guidePod(t, func(k *runnerconfig.Kubernetes) { k.HelperCPULimit, k.HelperCPURequest = "", "" })
	rs := QuotaRefusals(pod, []corev1.ResourceQuota{quota(rlist("limits.cpu", "64", "requests.cpu", "64"), nil)})
	if len(rs) == 0 || rs[0].Message != "failed quota: compute: must specify limits.cpu for: helper,init-permissions; requests.cpu for: helper,init-permissions" {
		t.Fatalf("refusals %+v", rs)
	}
	// A LimitRange default fills them in, as LimitRanger does before the quota.
	ApplyDefaults(pod, []corev1.LimitRange{{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Default: rlist("cpu", "500m"), DefaultRequest: rlist("cpu", "100m")}}}}})
	if rs := QuotaRefusals(pod, []corev1.ResourceQuota{quota(rlist("limits.cpu", "64", "requests.cpu", "64"), nil)}); len(rs) != 0 {
		t.Errorf("refusals after LimitRange defaults: %+v", rs)
	}
}

func TestLimitRangeMaxPerContainer(t *testing.T) {
	lr := corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: rlist("memory", "8Gi"), Min: rlist("cpu", "50m")}}}}
	rs := LimitRangeRefusals(guidePod(t, nil), []corev1.LimitRange{lr})
	if len(rs) != 1 || rs[0].Message != "maximum memory usage per Container is 8Gi, but limit is 20Gi (container build)" {
		t.Fatalf("refusals %+v", rs)
	}
	if rs := LimitRangeRefusals(guidePod(t, func(k *runnerconfig.Kubernetes) { k.MemoryLimit = "4Gi" }), []corev1.LimitRange{lr}); len(rs) != 0 {
		t.Errorf("a 4Gi build fits an 8Gi max: %+v", rs)
	}
}

func TestFittingQuotaSaysNothing(t *testing.T) {
	q := quota(rlist("limits.memory", "64Gi", "limits.cpu", "64", "requests.cpu", "8", "requests.memory", "16Gi", "pods", "10"), rlist("pods", "1"))
	if rs := QuotaRefusals(guidePod(t, nil), []corev1.ResourceQuota{q}); len(rs) != 0 {
		t.Errorf("refusals %+v, want none", rs)
	}
}

func TestLeakedSecrets(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	old := metav1.NewTime(now.Add(-2 * time.Hour))
	live := map[string]bool{"uid-live": true}
	for _, tc := range []struct {
		o    metav1.PartialObjectMetadata
		want bool
	}{
		{metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "runner-abc-project-5-concurrent-0-x", CreationTimestamp: old}}, true},
		{metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "runner-abc-project-5-concurrent-0-y", CreationTimestamp: old,
			OwnerReferences: []metav1.OwnerReference{{Kind: "Pod", UID: "uid-live"}}}}, false},
		{metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "runner-abc-project-5-concurrent-0-z", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}}, false},
		{metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "registry-pull", CreationTimestamp: old}}, false},
	} {
		if got := IsLeaked(tc.o, live, now); got != tc.want {
			t.Errorf("IsLeaked(%s) = %v, want %v", tc.o.Name, got, tc.want)
		}
	}
}

func TestRoom(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "build",
		Resources: corev1.ResourceRequirements{Requests: rlist("cpu", "1"), Limits: rlist("cpu", "1", "memory", "2Gi")}}}}}
	quota := func(name string, hard, used corev1.ResourceList) corev1.ResourceQuota {
		return corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
	}
	for _, c := range []struct {
		name   string
		quotas []corev1.ResourceQuota
		n      int64
		res    corev1.ResourceName
		ok     bool
	}{
		{"no quota", nil, 0, "", false},
		{"pods bind", []corev1.ResourceQuota{quota("q", rlist("pods", "3", "limits.memory", "64Gi"), rlist("pods", "2", "limits.memory", "0"))}, 1, "pods", true},
		{"memory binds", []corev1.ResourceQuota{quota("q", rlist("pods", "10", "limits.memory", "5Gi"), rlist("pods", "0", "limits.memory", "0"))}, 2, "limits.memory", true},
		{"full", []corev1.ResourceQuota{quota("q", rlist("requests.cpu", "4"), rlist("requests.cpu", "3500m"))}, 0, "requests.cpu", true},
		{"the tighter of two", []corev1.ResourceQuota{quota("a", rlist("pods", "9"), rlist("pods", "0")), quota("b", rlist("cpu", "3"), rlist("cpu", "0"))}, 3, "cpu", true},
	} {
		n, _, res, ok := Room(pod, c.quotas)
		if n != c.n || res != c.res || ok != c.ok {
			t.Errorf("%s: room %d (%s, %v), want %d (%s, %v)", c.name, n, res, ok, c.n, c.res, c.ok)
		}
	}
}
