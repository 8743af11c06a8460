package kubefacts

import (
	"strings"
	"testing"
)

// The answer is read as client-go reads it (plugin/pkg/client/auth/exec,
// v0.37.2): the configured apiVersion, a status, a token or both halves
// of a key pair.
func TestDecodeExecCredential(t *testing.T) {
	const v1 = "client.authentication.k8s.io/v1"
	for _, tc := range []struct {
		name, in, wantErr string
	}{
		{"token", `{"apiVersion":"` + v1 + `","kind":"ExecCredential","status":{"token":"abc"}}`, ""},
		{"other version", `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"abc"}}`, "not ExecCredential of " + v1},
		{"no status", `{"apiVersion":"` + v1 + `","kind":"ExecCredential"}`, "didn't return a status field"},
		{"empty status", `{"apiVersion":"` + v1 + `","kind":"ExecCredential","status":{}}`, "didn't return a token or cert/key pair"},
		{"half a pair", `{"apiVersion":"` + v1 + `","kind":"ExecCredential","status":{"clientCertificateData":"x"}}`, "only certificate or key"},
		{"not a pair", `{"apiVersion":"` + v1 + `","kind":"ExecCredential","status":{"clientCertificateData":"x","clientKeyData":"y"}}`, "do not make a pair"},
		{"not JSON", `token=supersecretvalue123`, "is not an ExecCredential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := decodeExecCredential([]byte(tc.in), v1)
			if tc.wantErr == "" {
				if err != nil || c.token != "abc" {
					t.Fatalf("got %+v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "supersecretvalue123") {
				t.Errorf("the error quotes the plugin's stdout: %v", err)
			}
		})
	}
}

// capped keeps its bound and never blocks or fails the writer.
func TestCappedKeepsTheFirstBytes(t *testing.T) {
	c := &capped{max: 8}
	for range 1000 {
		if n, err := c.Write([]byte("0123456789")); n != 10 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if string(c.b) != "01234567" || c.n != 10000 || !c.over {
		t.Errorf("kept %q of %d bytes, over %v", c.b, c.n, c.over)
	}
}
