package kubefacts

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// The files a context names are read through the Env, so under --root and
// refused when they are no regular file; the copy names no file, so
// client-go's ClientConfig opens nothing by host path.
func TestInlineKubeconfigFiles(t *testing.T) {
	root := t.TempDir()
	env := &hostio.Env{Root: root}
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("/k/ca.crt", "CA PEM")
	write("/k/token", "  tok-123\n")
	testroot.MakeZero(t, root, "/dev/zero")
	if err := os.Symlink("/dev/zero", filepath.Join(root, "k/zero")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "k/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := func(cluster clientcmdapi.Cluster, user clientcmdapi.AuthInfo) *clientcmdapi.Config {
		return &clientcmdapi.Config{
			Clusters:  map[string]*clientcmdapi.Cluster{"c": &cluster},
			AuthInfos: map[string]*clientcmdapi.AuthInfo{"u": &user},
			Contexts:  map[string]*clientcmdapi.Context{"x": {Cluster: "c", AuthInfo: "u"}},
		}
	}

	// Read: the data is the file's, the path is gone; the input is not
	// changed. The root-prefixed path rules.Load makes is the host path.
	in := kc(clientcmdapi.Cluster{CertificateAuthority: "/k/ca.crt"}, clientcmdapi.AuthInfo{TokenFile: filepath.Join(root, "k/token")})
	out, err := InlineKubeconfigFiles(hostfacts.RunnerReader{Env: env}, in, "x")
	if err != nil {
		t.Fatal(err)
	}
	c, u := out.Clusters["c"], out.AuthInfos["u"]
	if string(c.CertificateAuthorityData) != "CA PEM" || c.CertificateAuthority != "" || u.Token != "tok-123" || u.TokenFile != "" {
		t.Errorf("inlined %+v %+v", c, u)
	}
	if in.Clusters["c"].CertificateAuthority != "/k/ca.crt" {
		t.Error("the input was changed")
	}

	for _, tc := range []struct {
		name    string
		cluster clientcmdapi.Cluster
		user    clientcmdapi.AuthInfo
		want    string
	}{
		{"a device", clientcmdapi.Cluster{CertificateAuthority: "/k/zero"}, clientcmdapi.AuthInfo{},
			"the kubeconfig's certificate-authority (/k/zero: not a regular file (a character device))"},
		{"a FIFO", clientcmdapi.Cluster{}, clientcmdapi.AuthInfo{ClientCertificateData: []byte("x"), ClientKey: "/k/fifo"},
			"the kubeconfig's client-key (/k/fifo: not a regular file (a FIFO))"},
		{"tokenFile a device", clientcmdapi.Cluster{}, clientcmdapi.AuthInfo{TokenFile: "/k/zero"},
			"the kubeconfig's tokenFile (/k/zero: not a regular file (a character device))"},
		{"missing", clientcmdapi.Cluster{}, clientcmdapi.AuthInfo{ClientCertificate: "/k/none.crt"},
			"the kubeconfig's client-certificate (/k/none.crt: "},
		{"both", clientcmdapi.Cluster{CertificateAuthority: "/k/fifo", CertificateAuthorityData: []byte("x")}, clientcmdapi.AuthInfo{},
			`names both certificate-authority and certificate-authority-data`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := InlineKubeconfigFiles(hostfacts.RunnerReader{Env: env}, kc(tc.cluster, tc.user), "x")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}

	// A token given beside tokenFile wins, as in client-go: the file is not read.
	out, err = InlineKubeconfigFiles(hostfacts.RunnerReader{Env: env}, kc(clientcmdapi.Cluster{}, clientcmdapi.AuthInfo{Token: "given", TokenFile: "/k/fifo"}), "x")
	if err != nil || out.AuthInfos["u"].Token != "given" || out.AuthInfos["u"].TokenFile != "" {
		t.Errorf("token beside tokenFile: %v %+v", err, out)
	}
}
