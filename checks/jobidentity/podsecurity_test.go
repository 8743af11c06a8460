package jobidentity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
)

func pod(t *testing.T, k *runnerconfig.Kubernetes) *corev1.Pod {
	t.Helper()
	p, err := jobpod.Pod(k, jobpod.Flags{}, jobpod.Configured)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGuidesRunnerUnderEachLevel(t *testing.T) {
	p := pod(t, &runnerconfig.Kubernetes{})
	if v := Evaluate(nil, p); !v.Allowed || v.Level != "privileged:latest" {
		t.Errorf("no labels: %+v, want privileged allowed", v)
	}
	if v := Evaluate(map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}, p); !v.Allowed {
		t.Errorf("baseline: %+v, want allowed (the runner only drops NET_RAW)", v)
	}
	v := Evaluate(map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}, p)
	if v.Allowed || v.Level != "restricted:latest" {
		t.Fatalf("restricted: %+v, want forbidden", v)
	}
	for _, want := range []string{"allowPrivilegeEscalation != false", "unrestricted capabilities", "runAsNonRoot != true", "seccompProfile"} {
		if !strings.Contains(v.Detail, want) {
			t.Errorf("restricted detail %q does not say %q", v.Detail, want)
		}
	}
}

func TestRestrictedMetByTheRunnersKeys(t *testing.T) {
	no, yes := false, true
	drop := &runnerconfig.ContainerCapabilities{Drop: []string{"ALL"}}
	sc := runnerconfig.ContainerSecurityContext{Capabilities: drop}
	k := &runnerconfig.Kubernetes{
		AllowPrivilegeEscalation: &no,
		PodSecurityContext: runnerconfig.PodSecurityContext{RunAsNonRoot: &yes,
			SeccompProfile: &runnerconfig.SeccompProfile{Type: "RuntimeDefault"}},
		BuildContainerSecurityContext: sc, HelperContainerSecurityContext: sc, InitPermissionsContainerSecurityContext: sc,
	}
	if v := Evaluate(map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}, pod(t, k)); !v.Allowed {
		t.Errorf("restricted with the keys set: %+v, want allowed", v)
	}
}

func TestBaselineForbidsPrivilegedAndHostPath(t *testing.T) {
	yes := true
	k := &runnerconfig.Kubernetes{Privileged: &yes, Volumes: runnerconfig.Volumes{HostPaths: []runnerconfig.HostPathVolume{{Name: "docker", HostPath: "/var/run/docker.sock"}}}}
	v := Evaluate(map[string]string{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "v1.30"}, pod(t, k))
	if v.Allowed || v.Level != "baseline:v1.30" || !strings.Contains(v.Detail, "privileged") || !strings.Contains(v.Detail, "hostPath") {
		t.Errorf("privileged + host_path under baseline: %+v", v)
	}
}
