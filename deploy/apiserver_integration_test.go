//go:build integration

package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

const runnerNS = "code-runner"

// docs splits a manifest into its objects, as kubectl apply reads them.
func docs(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		out = append(out, u)
	}
}

// applier creates objects through the dynamic client, mapped by discovery
// as kubectl does.
type applier struct {
	dc     dynamic.Interface
	mapper meta.RESTMapper
}

func newApplier(t *testing.T, env *testenv.Env) *applier {
	t.Helper()
	cfg := env.AdminConfig()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(disc)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dc: dc, mapper: restmapper.NewDiscoveryRESTMapper(groups)}
}

func (a *applier) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dc.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return a.dc.Resource(m.Resource), nil
}

// create sends u to the API server: a server-side dry run (admission,
// validation, defaulting, nothing stored) when dryRun, else for real. Field
// validation is Strict, so a misspelt field is an error, as kubectl apply
// --validate=strict makes it.
func (a *applier) create(t *testing.T, u *unstructured.Unstructured, dryRun bool) error {
	t.Helper()
	ri, err := a.resource(u)
	if err != nil {
		return err
	}
	opts := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Create(t.Context(), u, opts)
	return err
}

func name(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return u.GetKind() + " " + ns + "/" + u.GetName()
	}
	return u.GetKind() + " " + u.GetName()
}

// TestManifestsDryRun applies every object of deploy/kubernetes with a
// server-side dry run on a real kube-apiserver, the namespace created first
// for real: each is accepted, and none is stored. Broken copies must be
// refused, so the test can fail.
func TestManifestsDryRun(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace(runnerNS)
	a := newApplier(t, env)
	var kinds []string
	for _, file := range []string{manifest, clusterRead} {
		for _, u := range docs(t, read(t, file)) {
			kinds = append(kinds, u.GetKind())
			if err := a.create(t, u, true); err != nil {
				t.Errorf("%s: %s: the dry run failed: %v", file, name(u), err)
				continue
			}
			ri, _ := a.resource(u)
			if _, err := ri.Get(t.Context(), u.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("%s: after a dry run, get: %v, want NotFound", name(u), err)
			}
		}
	}
	slices.Sort(kinds)
	want := []string{"ClusterRole", "ClusterRoleBinding", "ConfigMap", "CronJob", "Role", "RoleBinding", "ServiceAccount"}
	if !slices.Equal(kinds, want) {
		t.Errorf("applied %v, want %v", kinds, want)
	}

	// The negative controls.
	m := read(t, manifest)
	for _, c := range []struct {
		name, from, to, kind string
	}{
		{"a Role whose verbs are a string, not a list", `verbs: ["get", "list", "watch"]`, `verbs: "get"`, "Role"},
		{"a Role with a verb field of the wrong type", `verbs: ["get"]`, `verbs: {get: true}`, "Role"},
		{"a misspelt CronJob field", "concurrencyPolicy: Forbid", "concurencyPolicy: Forbid", "CronJob"},
		{"a schedule that is no schedule", `schedule: "*/10 * * * *"`, `schedule: "every ten minutes"`, "CronJob"},
		{"a pod failure policy on exit code 0", "values: [1, 2]", "values: [0, 2]", "CronJob"},
		{"a RoleBinding to a kind that is not one", "  kind: Role\n  name: doctor", "  kind: Rol\n  name: doctor", "RoleBinding"},
		{"an emptyDir size that is no quantity", "sizeLimit: 16Mi", "sizeLimit: lots", "CronJob"},
	} {
		t.Run(c.name, func(t *testing.T) {
			broken := strings.Replace(m, c.from, c.to, 1)
			if broken == m {
				t.Fatalf("the mutation changed nothing: %q is no longer in %s", c.from, manifest)
			}
			var target *unstructured.Unstructured
			for _, u := range docs(t, broken) {
				if u.GetKind() == c.kind {
					target = u
				}
			}
			if target == nil {
				t.Fatalf("no %s in the broken copy", c.kind)
			}
			err := a.create(t, target, true)
			if err == nil {
				t.Fatalf("the API server accepted %s", c.name)
			}
			if !apierrors.IsBadRequest(err) && !apierrors.IsInvalid(err) {
				t.Errorf("refused, but not as invalid: %v", err)
			}
			t.Logf("refused: %v", err)
		})
	}
}

// podFile is one file of a volume as the kubelet lays it out: the file is a
// symlink into ..data, itself a symlink to a timestamped directory.
func podFile(t *testing.T, root, dir string, files map[string]string, mode os.FileMode) {
	t.Helper()
	d := filepath.Join(root, dir)
	ts := filepath.Join(d, "..2026_11_29_12_00_00.000000001")
	if err := os.MkdirAll(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(d, "..data")); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(ts, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(d, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// healthyConfig is the Deckhouse guide's runner with what config-lint asks
// for, so that a run with nothing wrong is exit 0.
const healthyConfig = `concurrent = 4

[[runners]]
  name = "kubernetes"
  url = "https://code.example.invalid"
  token = "glrt-not-a-real-token-0000"
  executor = "kubernetes"
  output_limit = 51200
  [runners.kubernetes]
    namespace = "code-runner"
    image = "alpine:3"
    helper_image = "registry.example.invalid/runner-helper:v19.3.1"
    poll_timeout = 3600
    [runners.kubernetes.affinity]
      [runners.kubernetes.affinity.pod_anti_affinity]
        [[runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution]]
          topology_key = "kubernetes.io/hostname"
          [runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.label_selector]
            [[runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.label_selector.match_expressions]]
              key = "project.runner.gitlab.com/id"
              operator = "Exists"
`

// guideConfig is the Deckhouse guide's config.toml as it is.
const guideConfig = `concurrent = 4

[[runners]]
  name = "kubernetes"
  url = "https://code.example.invalid"
  token = "glrt-not-a-real-token-0000"
  executor = "kubernetes"
  [runners.kubernetes]
    namespace = "code-runner"
    image = "alpine:3"
    helper_image = "registry.example.invalid/runner-helper:v19.3.1"
`

type runReport struct {
	Summary struct {
		ExitCode   int      `json:"exitCode"`
		Incomplete []string `json:"incomplete"`
	} `json:"summary"`
	Findings []struct {
		Check    string `json:"check"`
		Severity string `json:"severity"`
		Title    string `json:"title"`
		Cause    string `json:"cause"`
	} `json:"findings"`
	Checks []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	} `json:"checks"`
}

func (r *runReport) status(id string) (string, string) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c.Status, c.Reason
		}
	}
	return "absent", ""
}

// buildDoctor builds cmd/doctor from this checkout.
func buildDoctor(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "doctor")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/doctor")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/doctor: %v\n%s", err, out)
	}
	return bin
}

// TestCronJobRunsDoctor runs the CronJob's own command against the real API
// server: the manifests applied for real, a token of the doctor
// ServiceAccount, and the pod's file system laid out from the CronJob's
// volumes and mounts as the kubelet lays them out (the runner's config.toml
// from its Secret, the kubeconfig from the ConfigMap, the service account's
// token and CA). The read-only Role is enough for every check the CronJob
// does not skip, and nothing it skips reports a false finding.
func TestCronJobRunsDoctor(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace(runnerNS)
	a := newApplier(t, env)
	for _, u := range docs(t, read(t, manifest)) {
		if err := a.create(t, u, false); err != nil {
			t.Fatalf("%s: %v", name(u), err)
		}
	}
	waitRole(t, env)
	cs := env.Clientset()
	tr, err := cs.CoreV1().ServiceAccounts(runnerNS).CreateToken(t.Context(), "doctor", &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	token := tr.Status.Token

	var cj *batchv1.CronJob
	var cm *corev1.ConfigMap
	for _, o := range objects(t, manifest) {
		switch o := o.(type) {
		case *batchv1.CronJob:
			cj = o
		case *corev1.ConfigMap:
			cm = o
		}
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	ctr := pod.Containers[0]
	bin := buildDoctor(t)

	// layout writes the pod's file system under a new root, config.toml
	// being config.
	layout := func(t *testing.T, config string) string {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "etc/passwd"), []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"
		podFile(t, root, saDir, map[string]string{"token": token, "ca.crt": string(env.CAPEM), "namespace": runnerNS}, 0o644)
		for _, m := range ctr.VolumeMounts {
			var v corev1.Volume
			for _, x := range pod.Volumes {
				if x.Name == m.Name {
					v = x
				}
			}
			switch {
			case v.Secret != nil:
				if v.Secret.SecretName != "code-runner-config" {
					t.Fatalf("secret %s: the test knows only code-runner-config", v.Secret.SecretName)
				}
				files := map[string]string{}
				for _, it := range v.Secret.Items {
					if it.Key == "config.toml" {
						files[it.Path] = config
					}
				}
				podFile(t, root, m.MountPath, files, os.FileMode(*v.Secret.DefaultMode))
			case v.ConfigMap != nil:
				files := map[string]string{}
				for k, text := range cm.Data {
					// The pod reaches the API server as kubernetes.default.svc; here it is
					// on loopback. doctor reads the kubeconfig's files under --root, but
					// client-go first checks certificate-authority at its host path, so
					// the paths name the root's copies.
					text = strings.ReplaceAll(text, "https://kubernetes.default.svc", env.URL)
					text = strings.ReplaceAll(text, saDir+"/", root+saDir+"/")
					files[k] = text
				}
				podFile(t, root, m.MountPath, files, os.FileMode(*v.ConfigMap.DefaultMode))
			case v.EmptyDir != nil:
				if err := os.MkdirAll(filepath.Join(root, m.MountPath), 0o1777); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("volume %s: a kind the test does not lay out", v.Name)
			}
		}
		return root
	}

	// run runs the container's command, plus what keeps the test on
	// loopback: the root, and no GitLab (the runner's url is .invalid).
	run := func(t *testing.T, root string, in ...string) *runReport {
		t.Helper()
		if len(ctr.Command) != 1 || ctr.Command[0] != "doctor" {
			t.Fatalf("command %v, want doctor", ctr.Command)
		}
		args := append(slices.Clone(ctr.Args), "--root", root, "--skip", "gitlab-reachability",
			"--resolver", "127.0.0.1:1", "--public-dns", "127.0.0.1:1", "--timeout", "60s")
		cmd := exec.Command(bin, args...)
		if len(in) > 0 {
			// In a container of the image: `docker run ... IMAGE` then the args.
			cmd = exec.Command(in[0], append(slices.Clone(in[1:]), args...)...)
		}
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "DOCTOR_LOOPBACK_ONLY=1", "LANG=C"}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var rep runReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("exit %d; the output is not JSON: %v\n%s\nstderr:\n%s", code, err, out.String(), errb.String())
		}
		if code != rep.Summary.ExitCode {
			t.Errorf("exit %d, the report says %d", code, rep.Summary.ExitCode)
		}
		if strings.Contains(out.String(), token[len(token)-20:]) {
			t.Errorf("the service account's token is in the output")
		}
		var lines []string
		for _, c := range rep.Checks {
			lines = append(lines, fmt.Sprintf("  %-22s %-8s %s", c.ID, c.Status, c.Reason))
		}
		for _, f := range rep.Findings {
			lines = append(lines, fmt.Sprintf("  finding %s %s: %s", f.Check, f.Severity, f.Cause))
		}
		t.Logf("exit %d, incomplete %v\n%s", code, rep.Summary.Incomplete, strings.Join(lines, "\n"))
		return &rep
	}

	skipped := map[string]bool{}
	for i, a := range ctr.Args {
		if a == "--skip" {
			for _, id := range strings.Split(ctr.Args[i+1], ",") {
				skipped[id] = true
			}
		}
	}

	healthy := func(t *testing.T, rep *runReport) {
		t.Helper()
		// The cluster-wide checks could not check (unknown), so the run
		// proves less than a healthy runner: exit 1, never 0.
		if rep.Summary.ExitCode != 1 || len(rep.Findings) != 0 || len(rep.Summary.Incomplete) == 0 {
			t.Errorf("exit %d, want 1 with no finding and the run marked incomplete (incomplete %v, findings %v)",
				rep.Summary.ExitCode, rep.Summary.Incomplete, rep.Findings)
		}
		// What the read-only Role must be enough for.
		for _, id := range []string{"config-decode", "api-auth", "namespace", "image-pull", "cluster-override"} {
			if st, why := rep.status(id); st != "pass" {
				t.Errorf("%s: %s (%s), want pass with the Role of doctor.yaml", id, st, why)
			}
		}
		for id := range skipped {
			if st, why := rep.status(id); st != "skipped" || why != "--skip" {
				t.Errorf("%s: %s (%s), want skipped by --skip", id, st, why)
			}
		}
		// Without doctor-cluster-read.yaml, the cluster-wide checks are
		// unknown, naming the RBAC the Role lacks.
		for _, id := range []string{"pending-no-node", "scale-to-zero"} {
			if st, why := rep.status(id); st != "unknown" || !strings.Contains(why, `at the cluster scope; its RBAC lacks verb "list" on resource "`) {
				t.Errorf("%s: %s (%s), want unknown naming the cluster-wide list it lacks", id, st, why)
			}
		}
	}
	t.Run("healthy runner, Role only: no finding, exit 1 for what it could not check", func(t *testing.T) {
		healthy(t, run(t, layout(t, healthyConfig)))
	})
	// The CronJob's container as the image scripts/image.sh builds it (the
	// one doctor.yaml names): the same command, as the pod's user 65532,
	// with the pod's files given to its fsGroup as the kubelet gives them,
	// on the host's loopback (where the test's apiserver is).
	t.Run("healthy runner, in the image the CronJob runs", func(t *testing.T) {
		img := buildImage(t)
		root := layout(t, healthyConfig)
		if out, err := exec.Command("chown", "-R", "0:65532", root).CombinedOutput(); err != nil {
			t.Fatalf("chown the pod's files to its fsGroup: %v\n%s", err, out)
		}
		healthy(t, run(t, root, img.dockerBin, "--host", img.host, "run", "--rm", "--network", "host", "--read-only",
			"--user", "65532:65532", "-e", "DOCTOR_LOOPBACK_ONLY=1", "-v", root+":"+root+":ro", img.ref))
	})

	t.Run("the guide's config.toml: exit 1, config-lint only", func(t *testing.T) {
		rep := run(t, layout(t, guideConfig))
		if rep.Summary.ExitCode != 1 {
			t.Errorf("exit %d, want 1", rep.Summary.ExitCode)
		}
		for _, f := range rep.Findings {
			if f.Check != "config-lint" {
				t.Errorf("finding of %s (%s): %s", f.Check, f.Severity, f.Cause)
			}
		}
		if len(rep.Findings) == 0 {
			t.Errorf("no findings: the guide's output_limit is config-lint's warning")
		}
	})

	t.Run("without the skips, the checks of the runner's own identity report doctor's", func(t *testing.T) {
		// The reason for --skip runner-rbac,exec-upgrade: with doctor's
		// read-only identity they report rights the runner has.
		args := slices.Clone(ctr.Args)
		i := slices.Index(args, "--skip")
		args[i+1] = "runner-process,runner-kubeconfig-env,kubeconfig-file"
		saved := ctr.Args
		ctr.Args = args
		defer func() { ctr.Args = saved }()
		rep := run(t, layout(t, healthyConfig))
		if st, _ := rep.status("runner-rbac"); st != "fail" {
			t.Errorf("runner-rbac %s, want fail: the skip would not be needed", st)
		}
	})

	t.Run("with doctor-cluster-read.yaml the cluster-wide checks run", func(t *testing.T) {
		for _, u := range docs(t, read(t, clusterRead)) {
			if err := a.create(t, u, false); err != nil {
				t.Fatalf("%s: %v", name(u), err)
			}
		}
		env.WaitAuthorized(doctorUser, doctorGroups, "list", "nodes")
		rep := run(t, layout(t, healthyConfig))
		for _, id := range []string{"pending-no-node", "pending-unschedulable", "scale-to-zero", "node-local-dns"} {
			if st, why := rep.status(id); st != "pass" && st != "fail" {
				t.Errorf("%s: %s (%s), want it to run", id, st, why)
			}
		}
	})
}

// TestRolesAreReadOnly asks the API server's authorizer what doctor's
// ServiceAccount may do, with the Role alone and with the optional
// ClusterRole: reads in its namespace, its own namespace object, and never a
// Secret nor a write.
func TestRolesAreReadOnly(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace(runnerNS)
	env.EnsureNamespace("other")
	a := newApplier(t, env)
	for _, u := range docs(t, read(t, manifest)) {
		if err := a.create(t, u, false); err != nil {
			t.Fatalf("%s: %v", name(u), err)
		}
	}
	waitRole(t, env)
	can := func(t *testing.T, verb, resource, sub, ns, obj string) bool {
		t.Helper()
		return allowed(t, env, doctorUser, doctorGroups, verb, resource, sub, ns, obj)
	}
	type access struct {
		verb, resource, sub, ns, name string
		want                          bool
	}
	check := func(t *testing.T, table []access) {
		t.Helper()
		for _, x := range table {
			if got := can(t, x.verb, x.resource, x.sub, x.ns, x.name); got != x.want {
				t.Errorf("can %s %s/%s -n %q %s: %v, want %v", x.verb, x.resource, x.sub, x.ns, x.name, got, x.want)
			}
		}
	}
	common := []access{
		{"list", "pods", "", runnerNS, "", true},
		{"watch", "pods", "", runnerNS, "", true},
		{"get", "pods", "", runnerNS, "job-1", true},
		{"list", "events", "", runnerNS, "", true},
		{"get", "namespaces", "", runnerNS, runnerNS, true},
		{"get", "secrets", "", runnerNS, "code-runner-config", false},
		{"list", "secrets", "", runnerNS, "", false},
		{"list", "secrets", "", "", "", false},
		{"create", "pods", "", runnerNS, "", false},
		{"delete", "pods", "", runnerNS, "job-1", false},
		{"patch", "pods", "", runnerNS, "job-1", false},
		{"create", "pods", "exec", runnerNS, "job-1", false},
		{"get", "pods", "log", runnerNS, "job-1", false},
		{"create", "events", "", runnerNS, "", false},
		{"delete", "namespaces", "", runnerNS, runnerNS, false},
		{"get", "configmaps", "", runnerNS, "doctor-kubeconfig", false},
	}
	t.Run("doctor.yaml", func(t *testing.T) {
		check(t, append(slices.Clone(common),
			access{"get", "namespaces", "", "other", "other", false},
			access{"list", "namespaces", "", "", "", false},
			access{"list", "pods", "", "other", "", false},
			access{"list", "nodes", "", "", "", false},
		))
	})
	t.Run("with doctor-cluster-read.yaml", func(t *testing.T) {
		for _, u := range docs(t, read(t, clusterRead)) {
			if err := a.create(t, u, false); err != nil {
				t.Fatalf("%s: %v", name(u), err)
			}
		}
		env.WaitAuthorized(doctorUser, doctorGroups, "list", "nodes")
		check(t, append(slices.Clone(common),
			access{"list", "nodes", "", "", "", true},
			access{"list", "pods", "", "", "", true},
			access{"list", "priorityclasses", "", "", "", true},
			access{"list", "secrets", "", "other", "", false},
			access{"patch", "nodes", "", "", "n1", false},
		))
	})
}

// doctor's ServiceAccount as the API server authenticates it.
const doctorUser = "system:serviceaccount:code-runner:doctor"

var doctorGroups = []string{"system:serviceaccounts", "system:serviceaccounts:code-runner", "system:authenticated"}

// groupOf is the API group of the resources these tests ask about.
var groupOf = map[string]string{"priorityclasses": "scheduling.k8s.io", "daemonsets": "apps"}

// allowed asks the authorizer, as the admin, whether user may verb the
// resource (a SubjectAccessReview).
func allowed(t *testing.T, env *testenv.Env, user string, groups []string, verb, resource, sub, ns, obj string) bool {
	t.Helper()
	r, err := env.Clientset().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &authzv1.ResourceAttributes{
			Verb: verb, Group: groupOf[resource], Resource: resource, Subresource: sub, Namespace: ns, Name: obj,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

// waitRole waits until the Role's binding is in the authorizer's cache
// (RBAC reads bindings from an informer, a moment after they are stored).
func waitRole(t *testing.T, env *testenv.Env) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !allowed(t, env, doctorUser, doctorGroups, "list", "pods", "", runnerNS, "") {
		if time.Now().After(deadline) {
			t.Fatalf("%s still may not list pods in %s after 10s", doctorUser, runnerNS)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
