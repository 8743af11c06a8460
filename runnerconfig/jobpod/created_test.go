package jobpod

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

func TestNames(t *testing.T) {
	if got := ProjectUniqueName(); got != "runner-dryrun-project-0-concurrent-0" {
		t.Errorf("ProjectUniqueName = %q", got)
	}
	long := strings.Repeat("x", 80)
	if got := generateName(long); len(got) != 63-8 || !strings.HasSuffix(got, "-") {
		t.Errorf("generateName of 80 characters: %q (%d), want 54 characters and a dash", got, len(got))
	}
	for in, want := range map[string]string{"My Runner!": "My_Runner", "-a.b_": "a.b", "$CI_PROJECT": "CI_PROJECT", "": ""} {
		if got := SanitizeLabel(in); got != want {
			t.Errorf("SanitizeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAsCreated(t *testing.T) {
	r := &runnerconfig.Runner{Name: "kcp tenant", Token: "glrt-ABCdefghijkl", Executor: "kubernetes", Kubernetes: &runnerconfig.Kubernetes{
		Namespace: "gitlab-runner", Image: "alpine:3.20", ServiceAccount: "ci", ImagePullSecrets: []string{"registry"},
		CPURequest: "100m", MemoryLimit: "1Gi", PullPolicy: runnerconfig.StringOrArray{"if-not-present", "always"},
		NodeSelector:      map[string]string{"kubernetes.io/arch": "amd64"},
		NodeTolerations:   map[string]string{"b=x": "NoSchedule", "a": "NoExecute"},
		PodLabels:         map[string]string{"team": "ci", "project.runner.gitlab.com/id": "forged", "job": "$CI_JOB_ID"},
		PodAnnotations:    map[string]string{"owner": "platform"},
		PriorityClassName: "ci", Services: []runnerconfig.Service{{Name: "postgres:16"}, {Name: "$DB_IMAGE"}},
		Volumes: runnerconfig.Volumes{EmptyDirs: []runnerconfig.EmptyDirVolume{{Name: "cache", MountPath: "/cache", SizeLimit: "1Gi"}},
			PVCs: []runnerconfig.PVCVolume{{Name: "$CI_PROJECT_ID", MountPath: "/pvc"}}},
	}}
	c, err := AsCreated(r, "gitlab-runner", "19.3.1~pre.2")
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pod
	if p.Name != "" || p.GenerateName != "runner-dryrun-project-0-concurrent-0-" || p.Namespace != "gitlab-runner" {
		t.Errorf("name %q generateName %q namespace %q", p.Name, p.GenerateName, p.Namespace)
	}
	for k, want := range map[string]string{
		"manager.runner.gitlab.com/name": "kcp_tenant", "manager.runner.gitlab.com/id-short": "dryrun",
		"job.runner.gitlab.com/pod": "runner-dryrun-project-0-concurrent-0", "project.runner.gitlab.com/id": "0",
		"team": "ci", "job": "CI_JOB_ID",
	} {
		if got := p.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if p.Annotations["owner"] != "platform" || p.Annotations["job.runner.gitlab.com/timeout"] == "" {
		t.Errorf("annotations %v", p.Annotations)
	}
	images := map[string]string{}
	for _, ct := range AllContainers(p) {
		images[ct.Name] = ct.Image
		if ct.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("%s pull policy %q, want IfNotPresent (the first of pull_policy)", ct.Name, ct.ImagePullPolicy)
		}
		var mounts []string
		for _, m := range ct.VolumeMounts {
			mounts = append(mounts, m.Name+":"+m.MountPath)
		}
		if got := strings.Join(mounts, " "); got != "scripts:/scripts-0-0 logs:/logs-0-0 cache:/cache repo:/builds" {
			t.Errorf("%s mounts %s", ct.Name, got)
		}
	}
	helper := DefaultHelperImageName + ":x86_64-v19.3.1"
	for name, want := range map[string]string{"build": "alpine:3.20", "helper": helper, "init-permissions": helper, "svc-0": "postgres:16", "svc-1": helper} {
		if images[name] != want {
			t.Errorf("%s image %q, want %q", name, images[name], want)
		}
	}
	var vols []string
	for _, v := range p.Spec.Volumes {
		vols = append(vols, v.Name)
	}
	if got := strings.Join(vols, " "); got != "cache repo scripts logs" {
		t.Errorf("volumes %s (the PVC named by a variable left out)", got)
	}
	if tl := p.Spec.Tolerations; len(tl) != 2 || tl[0].Key != "a" || tl[0].Operator != corev1.TolerationOpExists ||
		tl[1].Key != "b" || tl[1].Value != "x" || tl[1].Operator != corev1.TolerationOpEqual || tl[1].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("tolerations %+v", tl)
	}
	if p.Spec.RestartPolicy != corev1.RestartPolicyNever || p.Spec.DNSPolicy != corev1.DNSClusterFirst || p.Spec.PriorityClassName != "ci" ||
		p.Spec.ServiceAccountName != "ci" || len(p.Spec.ImagePullSecrets) != 1 {
		t.Errorf("spec %+v", p.Spec)
	}
	notes := strings.Join(c.Notes, "; ")
	for _, want := range []string{"service 1 names its image with a variable", "PersistentVolumeClaim volume $CI_PROJECT_ID", "pod label job names a variable"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	// The same config sends the same pod: a bundle's tape keys the request by its body.
	a, _ := json.Marshal(p)
	for range 5 {
		again, err := AsCreated(r, "gitlab-runner", "19.3.1~pre.2")
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(again.Pod); string(a) != string(b) {
			t.Fatalf("two builds differ:\n%s\n%s", a, b)
		}
	}
	if d := c.Describe(); !strings.Contains(d, "generateName runner-dryrun-project-0-concurrent-0- in gitlab-runner") || !strings.Contains(d, "build alpine:3.20") {
		t.Errorf("Describe: %s", d)
	}
}

func TestAsCreatedWithoutImageOrVersion(t *testing.T) {
	c, err := AsCreated(&runnerconfig.Runner{Token: "glrt-x", Kubernetes: &runnerconfig.Kubernetes{HelperImageFlavor: "ubuntu"}}, "default", "")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultHelperImageName + ":ubuntu-x86_64-latest"
	if b := c.Pod.Spec.Containers[0]; b.Image != want {
		t.Errorf("build image %q, want the helper image %q", b.Image, want)
	}
	if !strings.Contains(strings.Join(c.Notes, "; "), "version is unknown") {
		t.Errorf("notes %v", c.Notes)
	}
	c, err = AsCreated(&runnerconfig.Runner{Token: "glrt-x", Kubernetes: &runnerconfig.Kubernetes{HelperImage: "registry.example.com/helper:v${CI_RUNNER_VERSION}"}}, "default", "19.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Pod.Spec.Containers[1].Image; h != "registry.example.com/helper:v19.3.0" {
		t.Errorf("helper image %q", h)
	}
}
