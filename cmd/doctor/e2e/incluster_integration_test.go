//go:build integration

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// deckhouseConfig is the Deckhouse guide's in-cluster Kubernetes executor.
const deckhouseConfig = `concurrent = 4

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

// TestInClusterRunner is the Deckhouse shape: the runner runs as a pod
// (uid 1001) with no kubeconfig, and client-go's InClusterConfig gives it
// its service account, bound to the guide's code-runner Role. doctor must
// use the same credential, see the Role is enough, and not expect
// cluster-admin of it.
func TestInClusterRunner(t *testing.T) {
	cases := []struct {
		name      string
		resources []string
		want      fixture.Want
	}{
		{"guide-role", []string{"pods", "pods/exec", "pods/attach", "pods/log", "secrets", "configmaps", "services", "events"},
			// The guide's config.toml leaves output_limit at 4096 KB: a note,
			// not a warning, off rented nodes. What the Role does not grant (the namespace object,
			// cluster-scoped lists) makes those checks unknown, naming the
			// RBAC they lack: not failed, and not skipped either.
			// The run is incomplete for those: exit 1, not 0.
			fixture.Want{Exit: 1, Findings: []string{"config-lint"}, Absent: []string{"runner-rbac", "api-auth", "owner-rbac", "node-local-dns"},
				Says: map[string][]string{"config-lint": {"output_limit"}},
				Status: map[string]string{"api-auth": "pass", "runner-rbac": "pass", "owner-rbac": "skipped", "namespace": "unknown",
					"kubeconfig-file": "skipped", "pending-no-node": "unknown", "exec-upgrade": "pass"},
				Reason: map[string]string{"namespace": `its RBAC lacks verb "get" on resource "namespaces" in API group ""`,
					"pending-no-node": `its RBAC lacks verb "list" on resource "nodes" in API group ""`}}},
		{"role-without-exec", []string{"pods", "pods/attach", "pods/log", "secrets", "configmaps", "services", "events"},
			fixture.Want{Exit: 2, Top: "runner-rbac", Says: map[string][]string{"runner-rbac": {"create pods/exec", "system:serviceaccount:code-runner:code-runner"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			token := serviceAccount(t, env, "code-runner", "code-runner", tc.resources)
			root := testroot.New(t)
			root.Runner(77, 1001, map[string]string{
				"KUBERNETES_SERVICE_HOST": "127.0.0.1",
				"KUBERNETES_SERVICE_PORT": strconv.Itoa(env.Port),
				"HOME":                    "/home/gitlab-runner",
			}, "gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
			root.Write("/etc/gitlab-runner/config.toml", deckhouseConfig, 0o600)
			root.Chown("/etc/gitlab-runner/config.toml", 1001, 1001) // the pod's user reads it (a Secret mounted for it)
			root.Write(hostfacts.ServiceAccountDir+"/token", token, 0o600)
			root.Chown(hostfacts.ServiceAccountDir+"/token", 1001, 1001) // the pod's user reads it (a Secret mounted for it)
			root.Write(hostfacts.ServiceAccountDir+"/ca.crt", string(env.CAPEM), 0o644)
			rep, out := runReport(t, "run", "--root", root.Dir, "-o", "json", "--timeout", "60s", "--skip", "gitlab-reachability")
			fixture.AssertWant(t, rep, tc.want)
			if len(token) > 20 && strings.Contains(out, token[len(token)-20:]) {
				t.Errorf("the service-account token appears in the output")
			}
		})
	}
}

// serviceAccount creates the guide's ServiceAccount, a Role over resources
// with every verb the guide grants, its RoleBinding, and returns a token.
func serviceAccount(t *testing.T, env *testenv.Env, ns, name string, resources []string) string {
	t.Helper()
	cs := env.Clientset()
	ctx := t.Context()
	env.EnsureNamespace(ns)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: resources,
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(fmt.Errorf("token request: %w", err))
	}
	return tr.Status.Token
}

// TestInClusterDeployment is the guide's Kubernetes executor shape from its
// own code-runner.yaml (Secret with config.toml, ServiceAccount, Role,
// RoleBinding, Deployment) applied to the real apiserver. doctor runs on
// the runner's node, beside its container: it finds config.toml, which the
// init container copied from the Secret into an emptyDir, through the
// process's /proc/<pid>/root, not at /etc/gitlab-runner of its own root,
// and uses the service account's TokenRequest token the kubelet mounted.
func TestInClusterDeployment(t *testing.T) {
	env := testenv.Start(t)
	cases := []struct {
		name  string
		verbs []string // the Role's verbs; nil keeps the guide's
		// jobsNamespace replaces [runners.kubernetes] namespace, for one
		// that does not exist.
		jobsNamespace string
		want          fixture.Want
	}{
		{name: "guide", want: fixture.Want{Exit: 1, Findings: []string{"config-lint"}, Absent: []string{"runner-rbac", "api-auth", "namespace", "config-decode"},
			Status: map[string]string{"config-decode": "pass", "runner-rbac": "pass", "api-auth": "pass"}}},
		{name: "role-without-create", verbs: []string{"get", "list", "watch", "update", "patch", "delete"},
			want: fixture.Want{Exit: 2, Top: "runner-rbac", Says: map[string][]string{"runner-rbac": {"create pods", "create secrets", "system:serviceaccount:code-runner-1:code-runner",
				// The effective cluster every API finding cites: in-cluster, and why.
				"effective cluster https://127.0.0.1:", "in-cluster: host is empty, KUBERNETES_SERVICE_HOST and _PORT (127.0.0.1:", "the service-account token /var/run/secrets/kubernetes.io/serviceaccount/token can be read"}}}},
		{name: "jobs-namespace-missing", jobsNamespace: "code-runner-jobs",
			want: fixture.Want{Exit: 2, Top: "runner-rbac", Status: map[string]string{"namespace": "unknown"}, Reason: map[string]string{"namespace": `may not get namespaces in the namespace "code-runner-jobs"; its RBAC lacks verb "get" on resource "namespaces"`},
				Says: map[string][]string{"runner-rbac": {`in namespace "code-runner-jobs"`, `belongs to namespace "code-runner-2"`, "missing or misspelt"}}}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := env.WithT(t)
			ns := "code-runner"
			if i > 0 {
				ns = "code-runner-" + strconv.Itoa(i)
			}
			env.EnsureNamespace(ns)
			manifest := strings.ReplaceAll(string(readTestdata(t, "deckhouse/code-runner.yaml")), "namespace: code-runner", "namespace: "+ns)
			manifest = strings.ReplaceAll(manifest, "<TOKEN>", "glrt-not-a-real-token-0000")
			manifest = strings.ReplaceAll(manifest, "<VERSION>", "v19.3.1")
			var config string
			for _, doc := range splitYAML(t, []byte(manifest)) {
				switch doc["kind"] {
				case "Secret":
					config = doc["stringData"].(map[string]any)["config.toml"].(string)
				case "Role":
					if tc.verbs != nil {
						doc["rules"].([]any)[0].(map[string]any)["verbs"] = tc.verbs
					}
				case "RoleBinding":
					doc["subjects"].([]any)[0].(map[string]any)["namespace"] = ns
				}
				env.Apply(toYAML(t, doc))
			}
			jobs := ns
			if tc.jobsNamespace != "" {
				jobs = tc.jobsNamespace
			}
			config = strings.Replace(config, `namespace = "code-runner"`, `namespace = "`+jobs+`"`, 1)
			token := tokenFor(t, env, ns, "code-runner")

			root := testroot.New(t)
			root.Runner(77, 1001, map[string]string{
				"KUBERNETES_SERVICE_HOST": "127.0.0.1",
				"KUBERNETES_SERVICE_PORT": strconv.Itoa(env.Port),
				"HOME":                    "/home/gitlab-runner",
			}, "gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
			// The container's files, as the node sees them.
			root.Write("/proc/77/root/etc/gitlab-runner/config.toml", config, 0o600)
			root.Chown("/proc/77/root/etc/gitlab-runner/config.toml", 1001, 1001) // the pod's user reads it (a Secret mounted for it)
			root.Write("/proc/77/root"+hostfacts.ServiceAccountDir+"/token", token, 0o600)
			root.Chown("/proc/77/root"+hostfacts.ServiceAccountDir+"/token", 1001, 1001) // the pod's user reads it (a Secret mounted for it)
			root.Write("/proc/77/root"+hostfacts.ServiceAccountDir+"/ca.crt", string(env.CAPEM), 0o644)
			root.Write("/proc/77/mountinfo", "3012 2990 0:312 / / rw,relatime - overlay overlay rw\n"+
				"3021 3012 253:1 /var/lib/kubelet/pods/5e3c/volumes/kubernetes.io~empty-dir/config /etc/gitlab-runner rw,relatime - ext4 /dev/vda1 rw\n", 0o444)
			rep, out := runReport(t, "run", "--root", root.Dir, "-o", "json", "--timeout", "60s", "--skip", "gitlab-reachability")
			fixture.AssertWant(t, rep, tc.want)
			if len(token) > 20 && strings.Contains(out, token[len(token)-20:]) {
				t.Errorf("the service-account token appears in the output")
			}
		})
	}
}
