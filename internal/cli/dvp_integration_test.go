//go:build integration

package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"golang.org/x/crypto/ssh"

	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/internal/testing/testenv"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
)

var vmsGVR = schema.GroupVersionResource{Group: facts.DVPGroup, Version: facts.DVPVersion, Resource: "virtualmachines"}

// dvpCase is the guide's DVP shape with one thing changed.
type dvpCase struct {
	name string
	// pool edits the guide's pool manifest (parsed) before it is created;
	// noPool leaves it out.
	pool   func(spec map[string]any)
	noPool bool
	// noImage leaves the VirtualImage ubuntu-2204 out of the namespace.
	noImage bool
	// role replaces the guide's Role verbs on a resource.
	role map[string][]string
	// otherKey puts another key than key_path's in the cloud-init.
	otherKey bool
	// stuckVM adds a pool member that has been Pending for an hour.
	stuckVM bool
	// pluginKubeconfig gives the plugin a kubeconfig_path whose user has
	// no rights, instead of the pod's service account.
	pluginKubeconfig bool
	// outside runs the runner with neither KUBERNETES_SERVICE_HOST nor a
	// kubeconfig_path: the plugin has no identity.
	outside bool
	want    fixture.Want
}

// TestDVPRunner is the guide's instance runner with fleeting-plugin-dvp,
// run as its Deployment in the DVP cluster: the document's pool manifest,
// Secret (config.toml), ServiceAccount, Role, RoleBinding and Deployment
// applied to the real apiserver with minimal virtualization CRDs, the
// plugin's identity a TokenRequest token of that ServiceAccount. Each case
// changes one thing and its finding must rank first, for the runner "dvp".
func TestDVPRunner(t *testing.T) {
	env := testenv.Start(t)
	env.Apply(readTestdata(t, "crds/virtualization.deckhouse.io.yaml"))
	cases := []dvpCase{
		// The document's config.toml has no state_storage: fleeting-state's
		// warning (a restart replaces every VM) is the one finding, and no
		// error (exit 1).
		{name: "healthy", want: fixture.Want{Exit: 1, Findings: []string{"fleeting-state"}, Absent: []string{"dvp-pool", "dvp-rbac", "fleeting-plugin", "fleeting-connector"}}},
		{name: "pool-missing", noPool: true,
			want: fixture.Want{Exit: 2, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {"does not exist", "no job gets a VM", "scaleDownPolicy: Explicit", "ssh-keygen -y -f /ssh/id_ed25519"}}}},
		{name: "scale-down-newest-first", pool: func(s map[string]any) { s["scaleDownPolicy"] = "NewestFirst" },
			want: fixture.Want{Exit: 2, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {"scaleDownPolicy NewestFirst, not Explicit", `"scaleDownPolicy":"Explicit"`}}}},
		{name: "replicas-over-max", pool: func(s map[string]any) { s["replicas"] = 7 },
			want: fixture.Want{Exit: 1, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {"spec.replicas 7, more than max_instances 5"}}}},
		{name: "key-mismatch", otherKey: true,
			want: fixture.Want{Exit: 2, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {`does not authorize key_path's key for "gitlab-runner"`, "ssh-ed25519 SHA256:"}}}},
		{name: "image-missing", noImage: true,
			want: fixture.Want{Exit: 2, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {"VirtualImage ubuntu-2204, which does not exist in namespace"}}}},
		{name: "vm-stuck", stuckVM: true, pool: func(s map[string]any) { s["replicas"] = 1 },
			want: fixture.Want{Exit: 2, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {"instance never becomes ready", "code-runner-x7k2q", "status.phase=Pending", "VirtualDiskReady=False"}}}},
		{name: "role-without-patch", role: map[string][]string{"virtualmachinepools": {"get"}},
			want: fixture.Want{Exit: 2, Top: "dvp-rbac", Absent: []string{"dvp-pool"},
				Says: map[string][]string{"dvp-rbac": {"patch virtualmachinepools.virtualization.deckhouse.io", "cannot patch resource \"virtualmachinepools\"", "kind: ServiceAccount, name: code-runner"}}}},
		{name: "plugin-kubeconfig-without-rights", pluginKubeconfig: true,
			want: fixture.Want{Exit: 2, Top: "dvp-rbac", Says: map[string][]string{"dvp-rbac": {"dvp-plugin", "get virtualmachinepools", "patch virtualmachinepools", "list virtualmachines", "delete virtualmachines"}},
				Status: map[string]string{"dvp-pool": "unknown"}, Reason: map[string]string{"dvp-pool": "may not get virtualmachinepools"}}},
		{name: "plugin-without-identity", outside: true,
			want: fixture.Want{Exit: 2, Top: "dvp-pool", Says: map[string][]string{"dvp-pool": {"no identity", "unable to load in-cluster configuration"}},
				Status: map[string]string{"dvp-rbac": "skipped"}}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runDVPCase(t, env.WithT(t), "dvp-"+strconv.Itoa(i), tc)
		})
	}
}

func runDVPCase(t *testing.T, env *testenv.Env, ns string, tc dvpCase) {
	guide := func(file string) []byte {
		s := string(readTestdata(t, "deckhouse/"+file))
		s = strings.ReplaceAll(s, "code-runner-dvp", ns)
		s = strings.ReplaceAll(s, "<TOKEN>", "glrt-not-a-real-token-0000")
		s = strings.ReplaceAll(s, "<VERSION>", "v19.3.1")
		s = strings.ReplaceAll(s, "<STORAGE_CLASS_NAME>", "local")
		return []byte(s)
	}
	env.EnsureNamespace(ns)
	keyPEM, pub := sshKey(t)
	cloudKey := pub
	if tc.otherKey {
		_, cloudKey = sshKey(t)
	}

	// code-runner-dvp.yaml: Secret with config.toml, ServiceAccount, Role,
	// RoleBinding, Deployment.
	var config string
	for _, doc := range splitYAML(t, guide("code-runner-dvp.yaml")) {
		switch doc["kind"] {
		case "Secret":
			config = doc["stringData"].(map[string]any)["config.toml"].(string)
		case "Role":
			for _, r := range doc["rules"].([]any) {
				rule := r.(map[string]any)
				res := rule["resources"].([]any)[0].(string)
				if v, ok := tc.role[res]; ok {
					rule["verbs"] = v
				}
			}
		}
		env.Apply(toYAML(t, doc))
	}
	if !tc.noImage {
		env.Apply([]byte("apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualImage\nmetadata: {name: ubuntu-2204, namespace: " + ns +
			"}\nspec: {storage: ContainerRegistry, dataSource: {type: HTTP, http: {url: \"https://images.example.invalid/jammy.img\"}}}\n"))
	}
	if !tc.noPool {
		pools := splitYAML(t, []byte(strings.ReplaceAll(string(guide("code-runner-pool.yaml")), "<PUBLIC_KEY>", cloudKey)))
		spec := pools[0]["spec"].(map[string]any)
		if tc.pool != nil {
			tc.pool(spec)
		}
		pool := env.Apply(toYAML(t, pools[0]))[0]
		if tc.stuckVM {
			stuckVM(t, env, pool)
		}
	}

	root := testroot.New(t)
	// The Deckhouse image's PATH and plugin (fleeting-plugin checks them).
	environ := map[string]string{"HOME": "/home/gitlab-runner", "PATH": "/usr/local/bin:/usr/bin:/bin"}
	root.Write("/usr/local/bin/fleeting-plugin-dvp", "\x7fELF fleeting-plugin-dvp stand-in, never run\n", 0o755)
	if !tc.outside {
		environ["KUBERNETES_SERVICE_HOST"], environ["KUBERNETES_SERVICE_PORT"] = "127.0.0.1", strconv.Itoa(env.Port)
		token := tokenFor(t, env, ns, "code-runner")
		root.Write(facts.ServiceAccountDir+"/token", token, 0o600)
		root.Chown(facts.ServiceAccountDir+"/token", 1001, 1001) // the pod's user reads it (a Secret mounted for it)
		root.Write(facts.ServiceAccountDir+"/ca.crt", string(env.CAPEM), 0o644)
	}
	if tc.pluginKubeconfig {
		cert, key := env.MintClient("dvp-plugin", nil, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		env.WriteKubeconfig(filepath.Join(root.Dir, "ssh/kubeconfig"), env.URL, cert, key)
		root.Chown("/ssh/kubeconfig", 1001, 1001) // the runner's, whose plugin reads it
		config = strings.Replace(config, `name = "code-runner"`, "name = \"code-runner\"\n          kubeconfig_path = \"/ssh/kubeconfig\"", 1)
	}
	root.Runner(77, 1001, environ, "gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
	root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	root.Chown("/etc/gitlab-runner/config.toml", 1001, 1001) // the pod's user reads it (a Secret mounted for it)
	root.Write("/ssh/id_ed25519", string(keyPEM), 0o440)     // defaultMode: 0440, as the guide mounts it
	root.Chown("/ssh/id_ed25519", 0, 1001)                   // fsGroup: 1001
	// The operator's identity reads the VirtualImage, which the guide's
	// Role does not let the plugin read (nor need to).
	adminCert, adminKey := env.AdminCertPEM()
	env.WriteKubeconfig(filepath.Join(root.Dir, "root/.kube/operator.yaml"), env.URL, adminCert, adminKey)

	rep, out := runReport(t, "run", "--root", root.Dir, "-o", "json", "--timeout", "60s", "--skip", "gitlab-reachability",
		"--kubeconfig", "/root/.kube/operator.yaml")
	fixture.AssertWant(t, rep, tc.want)
	if tc.want.Top != "" && len(rep.Findings) > 0 {
		if r := rep.Findings[0].Runner; r == nil || r.Name != "dvp" {
			t.Errorf("top finding is for runner %v, want dvp", r)
		}
	}
	for _, secret := range []string{string(keyPEM[40:80]), strings.Fields(pub)[1]} {
		if strings.Contains(out, secret) {
			t.Errorf("the output carries key material %q", secret)
		}
	}
}

// stuckVM adds a member of the pool, labelled and owned as the pool
// controller makes them (deckhouse/virtualization poollabels), that entered
// Pending an hour ago waiting for its disk.
func stuckVM(t *testing.T, env *testenv.Env, pool *unstructured.Unstructured) {
	ctx := t.Context()
	ctrl := true
	vm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": facts.DVPGroup + "/" + facts.DVPVersion, "kind": "VirtualMachine",
		"metadata": map[string]any{"name": "code-runner-x7k2q", "namespace": pool.GetNamespace()},
		"spec":     map[string]any{"virtualMachineClassName": "generic"},
	}}
	vm.SetLabels(map[string]string{"vmpool.virtualization.deckhouse.io/pool-uid": string(pool.GetUID()), "vmpool.virtualization.deckhouse.io/pool": pool.GetName()})
	vm.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: pool.GetAPIVersion(), Kind: "VirtualMachinePool", Name: pool.GetName(), UID: pool.GetUID(), Controller: &ctrl}})
	vms := env.Dynamic().Resource(vmsGVR).Namespace(pool.GetNamespace())
	created, err := vms.Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	created.Object["status"] = map[string]any{
		"phase": "Pending",
		"stats": map[string]any{"phasesTransitions": []any{map[string]any{"phase": "Pending", "timestamp": hourAgo}}},
		"conditions": []any{map[string]any{"type": "BlockDevicesReady", "status": "False", "reason": "BlockDevicesNotReady",
			"message": "Waiting for the virtual disk code-runner-x7k2q-disk to be ready", "lastTransitionTime": hourAgo},
			map[string]any{"type": "VirtualDiskReady", "status": "False", "reason": "Provisioning", "lastTransitionTime": hourAgo}},
	}
	if _, err := vms.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// sshKey makes an ed25519 key pair as ssh-keygen -t ed25519 -N "" does:
// the OpenSSH private key (PEM) and the authorized_keys line.
func sshKey(t *testing.T) ([]byte, string) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "code-runner")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " code-runner"
}

// tokenFor is a TokenRequest token of the service account, as the kubelet
// mounts one into the pod.
func tokenFor(t *testing.T, env *testenv.Env, ns, sa string) string {
	tr, err := env.Clientset().CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	return tr.Status.Token
}

func readTestdata(t *testing.T, rel string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func splitYAML(t *testing.T, b []byte) []map[string]any {
	var out []map[string]any
	for _, part := range strings.Split("\n"+string(b), "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(part), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}

func toYAML(t *testing.T, m map[string]any) []byte {
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
