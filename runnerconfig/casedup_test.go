package runnerconfig

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestCaseDuplicates(t *testing.T) {
	data := []byte(`Concurrent = 2
concurrent = 4
[labels]
Team = "a"
team = "b"

[[runners]]
  name = "r"
  Executor = "shell"
  executor = "kubernetes"
  [runners.Docker]
    image = "a"
    Privileged = true
  [runners.docker]
    image = "b"
    tls_verify = true
  [runners.feature_flags]
    FF_X = true
    ff_x = false
  [runners.machine]
    idlecount = 1
    IdleCount = 2
[[runners]]
  name = "s"
  Executor = "shell"
  [runners.kubernetes]
    namespace = "x"
    NameSpace = "y"
    [[runners.kubernetes.volumes.nfs]]
      name = "n"
      Name = "m"
      mount_path = "/m"
      server = "s"
      path = "/p"
`)
	if _, _, err := Decode(data); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range CaseDuplicates(data) {
		got = append(got, fmt.Sprintf("%s %s %v %d", d.Path, d.Key, d.Lines, d.Winner))
	}
	want := []string{
		"concurrent concurrent [1 2] 0",
		"runners[0].executor runners.executor [9 10] 0",
		// two spellings of one table: merged by the decoder
		"runners[0].docker runners.docker [11 14] 0",
		// a key both define
		"runners[0].docker.image runners.docker.image [12 15] 0",
		// machine keys are CamelCase; idlecount selects IdleCount too
		"runners[0].machine.IdleCount runners.machine.IdleCount [21 22] 0",
		"runners[1].kubernetes.namespace runners.kubernetes.namespace [27 28] 0",
		// not: labels and feature_flags (map keys are case-sensitive), the
		// nfs volume's Name (left to Ignored), Executor of runners[1] alone.
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CaseDuplicates:\n got %q\nwant %q", got, want)
	}
	if CaseDuplicates([]byte("a = \n")) != nil || CaseDuplicates([]byte("[[runners]]\nexecutor = \"shell\"\n")) != nil {
		t.Error("duplicates where there are none")
	}
}

// Which of two case-variant keys the decoder keeps is not fixed: it stores
// both, in Go's randomised map order. In a small table (up to eight keys) Go
// 1.26 visits keys in insertion order seven times in eight, so the later
// line usually wins; in a larger one either wins, in proportions that depend
// on the keys.
func TestCaseDuplicateWinnerIsNotFixed(t *testing.T) {
	var big strings.Builder
	big.WriteString("[[runners]]\n")
	for _, k := range []string{"name", "url", "token", "limit", "builds_dir", "cache_dir", "clone_url", "shell", "output_limit", "request_concurrency"} {
		if strings.HasSuffix(k, "limit") || k == "request_concurrency" {
			fmt.Fprintf(&big, "%s = 1\n", k)
		} else {
			fmt.Fprintf(&big, "%s = \"x\"\n", k)
		}
	}
	big.WriteString("Executor = \"shell\"\nexecutor = \"kubernetes\"\n")
	for name, data := range map[string]string{
		"small table": "[[runners]]\nExecutor = \"shell\"\nexecutor = \"kubernetes\"\n",
		"large table": big.String(),
	} {
		t.Run(name, func(t *testing.T) {
			seen := map[string]int{}
			for range 2000 {
				cfg, _, err := Decode([]byte(data))
				if err != nil {
					t.Fatal(err)
				}
				seen[cfg.Runners[0].Executor]++
			}
			t.Logf("winners over 2000 decodes: %v", seen)
			if seen["shell"] == 0 || seen["kubernetes"] == 0 {
				t.Errorf("one spelling always won: %v", seen)
			}
		})
	}
}

func TestLocatePath(t *testing.T) {
	data := []byte("[[runners]]\nname = \"a\"\n[[runners]]\nname = \"b\"\n[runners.Machine]\n[[runners.Machine.Autoscaling]]\nperiods = [\"x\"]\n[[runners.machine.autoscaling]]\n")
	for path, want := range map[string]int{
		"runners[1].machine.autoscaling[0].Periods": 7,
		"runners[1].machine":                        5,
		"runners[1].machine.autoscaling":            6,
		"runners[0].name":                           2,
		"runners[0].machine":                        0,
		"runners[1].machine.autoscaling[1].Periods": 0,
	} {
		if got := LocatePath(data, path); got != want {
			t.Errorf("LocatePath(%q) = %d, want %d", path, got, want)
		}
	}
	if LocatePath([]byte("x = "), "x") != 0 {
		t.Error("LocatePath on invalid TOML")
	}
}
