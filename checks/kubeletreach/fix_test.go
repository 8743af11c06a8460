package kubeletreach

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// The read a finding gives: the kubectl facts give carries its kubeconfig
// and context as data words; the pod's namespace and name are checked
// names, or the block is a sentence that says which is none.
func TestReadByteHoldsHostileValues(t *testing.T) {
	benign := readByte(hostilefix.Kubectl("plain"), "kube-system", "node-dns-a")
	const wantText = "KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain logs -n kube-system node-dns-a --limit-bytes=1"
	if benign.Kind != checks.KindShell || benign.Text != wantText {
		t.Fatalf("%+v, want %s", benign, wantText)
	}
	// Every value is data: one word, or withheld; each an encoder prints is printed.
	printable := hostilefix.KubectlValues()
	if n := hostilefix.HoldsValues(t, hostile.Values, func(v string) checks.Steps {
		return checks.Steps{readByte(hostilefix.Kubectl(v), "kube-system", "node-dns-a")}
	}); n != len(printable) {
		t.Errorf("%d of %d values printed", n, len(printable))
	}
	for _, v := range hostile.Values {
		for _, tc := range []struct {
			ns, pod, which string
			err            error
		}{
			{v, "node-dns-a", "namespace", fixcode.NamespaceName(v)},
			{"kube-system", v, "name", fixcode.ObjectName(v)},
		} {
			st := readByte(hostilefix.Kubectl("plain"), tc.ns, tc.pod)
			if tc.err != nil {
				if st.Kind != checks.KindText || !strings.HasPrefix(st.Text, "doctor prints no command here: the pod's "+tc.which+" is not a valid") {
					t.Errorf("%q as the pod's %s: %+v", v, tc.which, st)
				}
				continue
			}
			if s := hostilefix.MustShape(t, st.Text); len(s.Stmts) != 1 || !strings.Contains(s.Stmts[0], fmt.Sprintf("%q", v)) {
				t.Errorf("%q as the pod's %s: %s", v, tc.which, s)
			}
		}
	}
}
