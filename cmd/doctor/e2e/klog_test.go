package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// klogLine is klog's header: severity, date, time, thread, file:line.
var klogLine = regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^ ]+:\d+\] .*$`)

// klogLines are stderr's lines klog wrote itself.
func klogLines(stderr string) []string {
	return klogLine.FindAllString(stderr, -1)
}

// An apiserver whose lists never end makes client-go log "Unexpected error
// when reading response body" (rest/request.go, through klog.FromContext)
// for each body the bounds cut: klog wrote those to stderr, past every
// setting, as ERROR lines. Without -v they go nowhere; at -v 2 they are
// doctor's own log lines, redacted.
func TestKlogGoesThroughTheVLogger(t *testing.T) {
	bin := cmdtest.BuildDoctor(t)
	for _, c := range []struct {
		v    string
		want bool // client-go's line is logged
	}{{"0", false}, {"2", true}} {
		t.Run("v"+c.v, func(t *testing.T) {
			run := hostileAPILists(t, testenv.EndlessBody)
			cmd := exec.Command(bin, append([]string{"run", "--root", run.root, "-o", "json", "--timeout", hostileTimeout.String(), "-v", c.v}, run.args...)...)
			cmd.Env = append(os.Environ(), "DOCTOR_LOOPBACK_ONLY=1", "KUBECONFIG=", "CI_REPOSITORY_URL=")
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			_ = cmd.Run()
			if l := klogLines(errb.String()); len(l) > 0 {
				t.Errorf("klog wrote to stderr:\n%s", strings.Join(l, "\n"))
			}
			got := strings.Contains(errb.String(), "doctor[v2]: client-go: Unexpected error when reading response body")
			if got != c.want {
				t.Errorf("-v %s: client-go's line logged %v, want %v; stderr:\n%.3000s", c.v, got, c.want, errb.String())
			}
		})
	}
}

func TestKlogLineMatchesKlogsHeader(t *testing.T) {
	for line, want := range map[string]bool{
		`E1203 07:22:48.053972   26293 request.go:1198] "Unexpected error when reading response body" err="x"`: true,
		`W0101 00:00:00.000000 1 warnings.go:70] Warning: deprecated`:                                          true,
		`doctor[v2]: client-go: Unexpected error when reading response body`:                                   false,
		`doctor: --deep creates a probe pod`:                                                                   false,
	} {
		if got := len(klogLines(line)) == 1; got != want {
			t.Errorf("%q: klog line %v, want %v", line, got, want)
		}
	}
}
