package kubeletserving

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// The approval a finding gives: the kubectl facts give carries its
// kubeconfig and context as data words; a CSR's name is an object name,
// one word, or the block is a sentence that says it is none.
func TestApproveHoldsHostileValues(t *testing.T) {
	benign := approveStep(hostilefix.Kubectl("plain"), "csr-a")
	const wantText = "KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain certificate approve csr-a"
	if benign.Kind != checks.KindShell || benign.Text != wantText {
		t.Fatalf("%+v, want %s", benign, wantText)
	}
	// Every value is data: one word, or withheld; each an encoder prints is printed.
	printable := hostilefix.KubectlValues()
	if n := hostilefix.HoldsValues(t, hostile.Values, func(v string) checks.Steps {
		return checks.Steps{approveStep(hostilefix.Kubectl(v), "csr-a")}
	}); n != len(printable) {
		t.Errorf("%d of %d values printed", n, len(printable))
	}
	for _, v := range hostile.Values {
		st := approveStep(hostilefix.Kubectl("plain"), v)
		if fixcode.ObjectName(v) != nil {
			if st.Kind != checks.KindText || !strings.HasPrefix(st.Text, "doctor prints no command here: the CSR's name is not a valid object name") {
				t.Errorf("%q as a CSR's name: %+v", v, st)
			}
			continue
		}
		if s := hostilefix.MustShape(t, st.Text); len(s.Stmts) != 1 || !strings.HasSuffix(s.Stmts[0], fmt.Sprintf(`"certificate", "approve", %q)`, v)) {
			t.Errorf("%q as a CSR's name: %s", v, s)
		}
	}
}

// The flag's TOML is the runner's table and key, as the encoder writes them.
func TestFlagFix(t *testing.T) {
	steps := flagFix(runnerconfig.Waiting{})
	if len(steps) != 2 || steps[1].Kind != checks.KindTOML || steps[1].Text != "[runners.feature_flags]\nFF_WAIT_FOR_POD_TO_BE_REACHABLE = true" {
		t.Errorf("%+v", steps)
	}
	if flagFix(runnerconfig.Waiting{On: true}) != nil {
		t.Error("a fix for a flag that is set")
	}
}
