//go:build integration

// Package dvpworld lays out, on a real apiserver (testenv), the guide's
// instance runner with fleeting-plugin-dvp as its Deployment deploys it in
// a DVP cluster, with one thing changed (a Shape). dvp-pool's and
// dvp-rbac's live cases and the CLI's cross-check cases read the same
// world.
package dvpworld

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// OperatorKubeconfig is the host path of the operator's (admin)
// kubeconfig World writes: the --kubeconfig a run passes, so dvp-pool reads
// the VirtualImage the guide's Role does not let the plugin read.
const OperatorKubeconfig = "/root/.kube/operator.yaml"

// Shape is the guide's DVP shape with one thing changed.
type Shape struct {
	// Pool edits the guide's pool manifest (parsed) before it is created;
	// NoPool leaves it out.
	Pool   func(spec map[string]any)
	NoPool bool
	// NoImage leaves the VirtualImage ubuntu-2204 out of the namespace.
	NoImage bool
	// Role replaces the guide's Role verbs on a resource.
	Role map[string][]string
	// OtherKey puts another key than key_path's in the cloud-init.
	OtherKey bool
	// StuckVM adds a pool member that has been Pending for an hour.
	StuckVM bool
	// PluginKubeconfig gives the plugin a kubeconfig_path whose user has
	// no rights, instead of the pod's service account.
	PluginKubeconfig bool
	// Outside runs the runner with neither KUBERNETES_SERVICE_HOST nor a
	// kubeconfig_path: the plugin has no identity.
	Outside bool
}

// World is a laid-out DVP runner: its host, and the key material a test
// asserts never reaches the output.
type World struct {
	Root *testroot.Root
	// KeyPEM is key_path's private key; PublicKey its authorized_keys line.
	KeyPEM    []byte
	PublicKey string
}

// ApplyCRDs applies the minimal virtualization CRDs (testdata/crds) once
// per apiserver, before the first World.
func ApplyCRDs(t testing.TB, env *testenv.Env) {
	t.Helper()
	env.Apply(Testdata(t, "crds/virtualization.deckhouse.io.yaml"))
}

// Lay applies the guide's code-runner-dvp.yaml (Secret with config.toml,
// ServiceAccount, Role, RoleBinding, Deployment), its VirtualImage and
// code-runner-pool.yaml in namespace ns, shaped by s, and lays out the
// runner pod's host: the Deckhouse image's PATH and plugin, the service
// account's token (a TokenRequest token), config.toml, the SSH key mounted
// as the guide mounts it, and the operator's kubeconfig.
func Lay(t testing.TB, env *testenv.Env, ns string, s Shape) *World {
	t.Helper()
	guide := func(file string) []byte {
		s := string(Testdata(t, "deckhouse/"+file))
		s = strings.ReplaceAll(s, "code-runner-dvp", ns)
		s = strings.ReplaceAll(s, "<TOKEN>", "glrt-not-a-real-token-0000")
		s = strings.ReplaceAll(s, "<VERSION>", "v19.3.1")
		s = strings.ReplaceAll(s, "<STORAGE_CLASS_NAME>", "local")
		return []byte(s)
	}
	env.EnsureNamespace(ns)
	keyPEM, pub := SSHKey(t)
	cloudKey := pub
	if s.OtherKey {
		_, cloudKey = SSHKey(t)
	}

	var config string
	for _, doc := range SplitYAML(t, guide("code-runner-dvp.yaml")) {
		switch doc["kind"] {
		case "Secret":
			config = doc["stringData"].(map[string]any)["config.toml"].(string)
		case "Role":
			for _, r := range doc["rules"].([]any) {
				rule := r.(map[string]any)
				res := rule["resources"].([]any)[0].(string)
				if v, ok := s.Role[res]; ok {
					rule["verbs"] = v
				}
			}
		}
		env.Apply(ToYAML(t, doc))
	}
	if !s.NoImage {
		env.Apply([]byte("apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualImage\nmetadata: {name: ubuntu-2204, namespace: " + ns +
			"}\nspec: {storage: ContainerRegistry, dataSource: {type: HTTP, http: {url: \"https://images.example.invalid/jammy.img\"}}}\n"))
	}
	if !s.NoPool {
		pools := SplitYAML(t, []byte(strings.ReplaceAll(string(guide("code-runner-pool.yaml")), "<PUBLIC_KEY>", cloudKey)))
		spec := pools[0]["spec"].(map[string]any)
		if s.Pool != nil {
			s.Pool(spec)
		}
		pool := env.Apply(ToYAML(t, pools[0]))[0]
		if s.StuckVM {
			stuckVM(t, env, pool)
		}
	}

	root := testroot.New(t)
	// The Deckhouse image's PATH and plugin (fleeting-plugin checks them).
	environ := map[string]string{"HOME": "/home/gitlab-runner", "PATH": "/usr/local/bin:/usr/bin:/bin"}
	root.Write("/usr/local/bin/fleeting-plugin-dvp", "\x7fELF fleeting-plugin-dvp stand-in, never run\n", 0o755)
	if !s.Outside {
		environ["KUBERNETES_SERVICE_HOST"], environ["KUBERNETES_SERVICE_PORT"] = "127.0.0.1", strconv.Itoa(env.Port)
		token := TokenFor(t, env, ns, "code-runner")
		root.Write(hostfacts.ServiceAccountDir+"/token", token, 0o600)
		root.Chown(hostfacts.ServiceAccountDir+"/token", 1001, 1001) // the pod's user reads it (a Secret mounted for it)
		root.Write(hostfacts.ServiceAccountDir+"/ca.crt", string(env.CAPEM), 0o644)
	}
	if s.PluginKubeconfig {
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
	env.WriteKubeconfig(filepath.Join(root.Dir, OperatorKubeconfig), env.URL, adminCert, adminKey)
	return &World{Root: root, KeyPEM: keyPEM, PublicKey: pub}
}

// Secrets are fragments of the world's key material no output may carry.
func (w *World) Secrets() []string {
	return []string{string(w.KeyPEM[40:80]), strings.Fields(w.PublicKey)[1]}
}

var vmsGVR = schema.GroupVersionResource{Group: kubefacts.DVPGroup, Version: kubefacts.DVPVersion, Resource: "virtualmachines"}

// stuckVM adds a member of the pool, labelled and owned as the pool
// controller makes them (deckhouse/virtualization poollabels), that entered
// Pending an hour ago waiting for its disk.
func stuckVM(t testing.TB, env *testenv.Env, pool *unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	ctrl := true
	vm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kubefacts.DVPGroup + "/" + kubefacts.DVPVersion, "kind": "VirtualMachine",
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

// SSHKey makes an ed25519 key pair as ssh-keygen -t ed25519 -N "" does:
// the OpenSSH private key (PEM) and the authorized_keys line.
func SSHKey(t testing.TB) ([]byte, string) {
	t.Helper()
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

// TokenFor is a TokenRequest token of the service account, as the kubelet
// mounts one into the pod.
func TokenFor(t testing.TB, env *testenv.Env, ns, sa string) string {
	t.Helper()
	tr, err := env.Clientset().CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authnv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request: %v", err)
	}
	return tr.Status.Token
}

// Testdata reads rel under the repository's testdata/.
func Testdata(t testing.TB, rel string) []byte {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("dvpworld: no source path")
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SplitYAML parses a multi-document manifest into its documents.
func SplitYAML(t testing.TB, b []byte) []map[string]any {
	t.Helper()
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

// ToYAML is m as a manifest for testenv's Apply.
func ToYAML(t testing.TB, m map[string]any) []byte {
	t.Helper()
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
