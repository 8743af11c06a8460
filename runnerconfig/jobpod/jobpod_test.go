package jobpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

func TestPodOfTheGuidesRunner(t *testing.T) {
	k := &runnerconfig.Kubernetes{
		CPURequest: "100m", MemoryRequest: "128Mi", CPULimit: "10", MemoryLimit: "20Gi",
		HelperCPURequest: "100m", HelperMemoryRequest: "128Mi", HelperCPULimit: "1", HelperMemoryLimit: "1Gi",
		MemoryLimitOverwriteMaxAllowed: "32Gi",
		Services:                       []runnerconfig.Service{{Name: "postgres:16"}},
		ServiceMemoryLimit:             "512Mi",
	}
	pod, err := Pod(k, Flags{}, Configured)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range AllContainers(pod) {
		names = append(names, c.Name)
	}
	if got := names; len(got) != 4 || got[0] != "init-permissions" || got[1] != "build" || got[2] != "helper" || got[3] != "svc-0" {
		t.Fatalf("containers %v, want init-permissions, build, helper, svc-0", got)
	}
	req, lim := Sum(pod, false), Sum(pod, true)
	// requests: build 100m + helper 100m + the service's limit as its request
	// (512Mi memory, no cpu); the init container's 100m is not more.
	if q := req[corev1.ResourceCPU]; q.String() != "200m" {
		t.Errorf("requests.cpu %s, want 200m", q.String())
	}
	if q := req[corev1.ResourceMemory]; q.String() != "768Mi" {
		t.Errorf("requests.memory %s, want 768Mi (128Mi+128Mi+512Mi)", q.String())
	}
	if q := lim[corev1.ResourceMemory]; q.Value() != (20<<30)+(1<<30)+(512<<20) {
		t.Errorf("limits.memory %s, want 20Gi+1Gi+512Mi", q.String())
	}
	if _, ok := lim[corev1.ResourceCPU]; !ok {
		t.Errorf("limits.cpu missing: %v", lim)
	}
	most, err := Pod(k, Flags{}, MostAllowed)
	if err != nil {
		t.Fatal(err)
	}
	if q := most.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; q.String() != "32Gi" {
		t.Errorf("most a job may ask for build memory: %s, want 32Gi (memory_limit_overwrite_max_allowed)", q.String())
	}
	sc := pod.Spec.Containers[0].SecurityContext
	if sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "NET_RAW" {
		t.Errorf("build security context %+v, want NET_RAW dropped by default", sc)
	}
	if pod.Spec.SecurityContext != nil {
		t.Errorf("pod security context %+v, want nil with no pod_security_context", pod.Spec.SecurityContext)
	}
}

func TestLegacyExecutionHasNoInitContainer(t *testing.T) {
	pod, err := Pod(&runnerconfig.Kubernetes{}, Flags{LegacyExecution: true}, Configured)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.InitContainers) != 0 {
		t.Errorf("init containers %v with the legacy execution strategy, want none", pod.Spec.InitContainers)
	}
	if _, err := Pod(&runnerconfig.Kubernetes{CPURequest: "lots"}, Flags{}, Configured); err == nil {
		t.Error("cpu_request = \"lots\" built a pod; the runner refuses it")
	}
}

func TestCapAddNetRawAndContainerOverride(t *testing.T) {
	k := &runnerconfig.Kubernetes{CapAdd: []string{"NET_RAW", "SYS_ADMIN"},
		HelperContainerSecurityContext: runnerconfig.ContainerSecurityContext{Capabilities: &runnerconfig.ContainerCapabilities{Drop: []string{"ALL"}}}}
	pod, err := Pod(k, Flags{}, Configured)
	if err != nil {
		t.Fatal(err)
	}
	b, h := pod.Spec.Containers[0].SecurityContext.Capabilities, pod.Spec.Containers[1].SecurityContext.Capabilities
	if len(b.Add) != 2 || len(b.Drop) != 0 {
		t.Errorf("build capabilities %+v, want add NET_RAW, SYS_ADMIN", b)
	}
	if len(h.Drop) != 1 || h.Drop[0] != "ALL" || len(h.Add) != 2 {
		t.Errorf("helper capabilities %+v, want drop ALL replacing the merged drop, add kept", h)
	}
}
