package bundle

import (
	"encoding/base64"
	"strings"
	"testing"
)

// A *-data value that does not decode (a kubeconfig cut mid-value) is not
// kept, and fails in the bundle where it failed on the host: analyze of a
// cut kubeconfig reports what the live run did (issue 8, bad-input matrix).
func TestReplaceBase64KeepsTheFailure(t *testing.T) {
	full := base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nnot a real one\n"))
	for _, v := range []string{full[:len(full)-3], full[:13] + "*" + full[14:], "%%"} {
		_, want := base64.StdEncoding.DecodeString(v)
		got := newStandIns().replaceBase64(v)
		_, err := base64.StdEncoding.DecodeString(got)
		if want == nil || err == nil || err.Error() != want.Error() {
			t.Errorf("%q became %q: decodes with %v, the original with %v", v, got, err, want)
		}
		if strings.Contains(got, v[:2]) && v != "%%" {
			t.Errorf("%q kept its value: %q", v, got)
		}
	}
}
