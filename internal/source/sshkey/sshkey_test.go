package sshkey_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/source/sshkey"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// Keys written by the real ssh-keygen, of every type and format the runner's
// SSH library reads: the type, format, passphrase and fingerprint doctor
// reports are the ones ssh-keygen itself prints for the same file.
func TestSSHKeygenKeys(t *testing.T) {
	keygen := tools.Need(t, "ssh-keygen", "Debian's openssh-client package")
	dir := t.TempDir()
	for _, tc := range []struct {
		name, typ, format string
		args              []string
	}{
		{"ed25519", "Ed25519", "OpenSSH", []string{"-t", "ed25519", "-N", ""}},
		{"ed25519-passphrase", "Ed25519", "OpenSSH", []string{"-t", "ed25519", "-N", "secret-passphrase"}},
		{"rsa", "RSA", "OpenSSH", []string{"-t", "rsa", "-b", "2048", "-N", ""}},
		{"rsa-pem", "RSA", "PEM PKCS#1", []string{"-t", "rsa", "-b", "2048", "-N", "", "-m", "PEM"}},
		{"ecdsa", "ECDSA P-256", "OpenSSH", []string{"-t", "ecdsa", "-b", "256", "-N", ""}},
		{"ecdsa-pem", "ECDSA P-384", "PEM SEC1", []string{"-t", "ecdsa", "-b", "384", "-N", "", "-m", "PEM"}},
		{"ecdsa-pkcs8", "ECDSA P-256", "PEM PKCS#8", []string{"-t", "ecdsa", "-b", "256", "-N", "", "-m", "PKCS8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name)
			args := append([]string{"-q", "-C", "doctor-test", "-f", file}, tc.args...)
			if out, err := exec.Command(keygen, args...).CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen %v: %v\n%s", args, err, out)
			}
			priv, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			k, err := sshkey.Parse(priv)
			if err != nil {
				t.Fatal(err)
			}
			encrypted := strings.Contains(tc.name, "passphrase")
			if !k.Private || k.Type != tc.typ || k.Format != tc.format || k.Encrypted != encrypted {
				t.Errorf("got %+v (%s), want a private %s key in %s format, encrypted %v", k, k, tc.typ, tc.format, encrypted)
			}
			// ssh-keygen -l prints "<bits> SHA256:… comment (TYPE)" for the
			// public half; a fingerprint doctor reports must be that one.
			out, err := exec.Command(keygen, "-l", "-E", "sha256", "-f", file+".pub").Output()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(string(out))[1]
			if k.Fingerprint != "" && k.Fingerprint != want {
				t.Errorf("fingerprint %s, ssh-keygen says %s", k.Fingerprint, want)
			}
			if k.Fingerprint == "" && !k.Encrypted {
				t.Errorf("no fingerprint for an unencrypted key: %+v", k)
			}
			pub, _ := os.ReadFile(file + ".pub")
			if k.Authorized != "" && !strings.HasPrefix(string(pub), k.Authorized) {
				t.Errorf("authorized form %q is not the .pub file's %q", k.Authorized, pub)
			}
			pk, err := sshkey.Parse(pub)
			if err != nil || pk.Private || pk.Fingerprint != want {
				t.Errorf(".pub file: %+v, %v; want a public key with %s", pk, err, want)
			}
			if s := k.String(); strings.Contains(s, "PRIVATE") || strings.Contains(s, string(priv[40:60])) {
				t.Errorf("the description carries key text: %s", s)
			}
		})
	}
}

// The keys tests mint (testpki) read as ssh-keygen's do, and ssh-keygen
// accepts them: the fixtures' keys are real keys.
func TestMintedKeys(t *testing.T) {
	keygen := tools.Need(t, "ssh-keygen", "Debian's openssh-client package")
	for kind, typ := range map[string]string{"ed25519": "Ed25519", "ecdsa": "ECDSA P-256", "rsa": "RSA"} {
		priv, authorized, err := testpki.SSHKey(kind, "minted")
		if err != nil {
			t.Fatal(err)
		}
		k, err := sshkey.Parse(priv)
		if err != nil || k.Type != typ || !k.Private {
			t.Errorf("%s: %+v, %v", kind, k, err)
		}
		if !strings.HasPrefix(authorized, k.Authorized) {
			t.Errorf("%s: public half %q, minted %q", kind, k.Authorized, authorized)
		}
		file := filepath.Join(t.TempDir(), kind)
		if err := os.WriteFile(file, priv, 0o600); err != nil {
			t.Fatal(err)
		}
		// ssh-keygen -y derives the public half from the private file.
		out, err := exec.Command(keygen, "-y", "-f", file).Output()
		if err != nil {
			t.Fatalf("%s: ssh-keygen -y refuses the minted key: %v", kind, err)
		}
		if got := strings.Fields(string(out)); len(got) < 2 || got[0]+" "+got[1] != k.Authorized {
			t.Errorf("%s: ssh-keygen -y gives %q, doctor %q", kind, out, k.Authorized)
		}
	}
}

func TestNotAPrivateKey(t *testing.T) {
	for name, content := range map[string]string{
		"empty":       "",
		"text":        "not a key at all\n",
		"certificate": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
	} {
		if k, err := sshkey.Parse([]byte(content)); err == nil {
			t.Errorf("%s parses as %+v", name, k)
		}
	}
}
