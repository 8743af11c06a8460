package dvppool

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
)

func newKey(t *testing.T, passphrase string) ([]byte, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := ssh.NewPublicKey(pub)
	return pem.EncodeToMemory(block), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
}

// The guide's userData, with the key the runner holds, another key, the
// placeholder left in, and a passphrase-protected key_path.
func TestCloudInitKey(t *testing.T) {
	priv, pub := newKey(t, "")
	encrypted, encPub := newKey(t, "secret")
	_, other := newKey(t, "")
	guide := func(key string) string {
		return "#cloud-config\npackage_update: true\npackages:\n  - git\nusers:\n  - default\n  - name: gitlab-runner\n    shell: /bin/bash\n" +
			"    ssh_authorized_keys:\n      - " + key + "\n"
	}
	for _, tc := range []struct {
		name, userData string
		key            []byte
		authorized     bool
		bad            int
	}{
		{"same key", guide(pub + " code-runner"), priv, true, 0},
		{"other key", guide(other), priv, false, 0},
		{"placeholder", guide("<PUBLIC_KEY>"), priv, false, 1},
		{"encrypted key_path", guide(encPub), encrypted, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			users, err := cloudUsers(tc.userData)
			if err != nil {
				t.Fatal(err)
			}
			if len(users) != 1 || users[0].Name != "gitlab-runner" {
				t.Fatalf("users %+v, want only gitlab-runner (default is not named)", users)
			}
			k, err := publicHalf(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			ok, bad := authorizes(users[0].Keys, k)
			if ok != tc.authorized || bad != tc.bad {
				t.Errorf("authorizes = %v, %d bad; want %v, %d", ok, bad, tc.authorized, tc.bad)
			}
			if d := describeKey(k); strings.Contains(d, strings.Fields(pub)[1]) || !strings.HasPrefix(d, "ssh-ed25519 SHA256:") {
				t.Errorf("describeKey = %q: want type and fingerprint, never the key", d)
			}
		})
	}
	if _, err := cloudUsers("users:\n  - name: gitlab-runner\n"); err == nil {
		t.Error("userData without #cloud-config accepted")
	}
	if _, err := publicHalf([]byte("not a key")); err == nil {
		t.Error("publicHalf accepted no key")
	}
}

// The guide's pool passes; each change the check must see is found.
func TestSpecFindings(t *testing.T) {
	pc := configfacts.PluginConfig{Plugin: configfacts.DVPPlugin, Namespace: "code-runner-dvp", Name: "code-runner", MaxInstances: 5}
	guide := `
spec:
  replicas: 0
  scaleDownPolicy: Explicit
  virtualMachineTemplate:
    spec:
      blockDeviceRefs: [{kind: VirtualDisk, name: disk}]
  virtualDiskTemplates:
    - name: disk
      spec:
        dataSource: {type: ObjectRef, objectRef: {kind: VirtualImage, name: ubuntu-2204}}
        persistentVolumeClaim: {size: 20Gi}
`
	for _, tc := range []struct {
		name string
		edit func(spec map[string]any)
		want []string
	}{
		{"guide", func(map[string]any) {}, nil},
		{"OldestFirst", func(s map[string]any) { s["scaleDownPolicy"] = "OldestFirst" }, []string{"scaleDownPolicy OldestFirst, not Explicit"}},
		{"no policy", func(s map[string]any) { delete(s, "scaleDownPolicy") }, []string{"scaleDownPolicy (unset), not Explicit"}},
		{"replicas 6", func(s map[string]any) { s["replicas"] = int64(6) }, []string{"spec.replicas 6, more than max_instances 5"}},
		{"replicas 5", func(s map[string]any) { s["replicas"] = int64(5) }, nil},
		{"no template", func(s map[string]any) { delete(s, "virtualMachineTemplate") }, []string{"no spec.virtualMachineTemplate.spec"}},
		{"no size", func(s map[string]any) {
			d := s["virtualDiskTemplates"].([]any)[0].(map[string]any)["spec"].(map[string]any)
			delete(d, "persistentVolumeClaim")
		}, []string{"no disk template with a size"}},
		{"no disks", func(s map[string]any) { delete(s, "virtualDiskTemplates") }, []string{"no disk template with a size"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(guide), &obj); err != nil {
				t.Fatal(err)
			}
			tc.edit(obj["spec"].(map[string]any))
			got := specFindings(&unstructured.Unstructured{Object: obj}, pc, "[[runners]] #1 \"dvp\"")
			if len(got) != len(tc.want) {
				t.Fatalf("%d findings, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].Cause, w) {
					t.Errorf("finding %q does not say %q", got[i].Cause, w)
				}
			}
		})
	}
}
