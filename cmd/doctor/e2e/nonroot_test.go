package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// doctorUID is the user TestNonRootDoctor runs doctor as: neither root
// nor the runner's uid (startRunnerAs's 1001).
const doctorUID = 1002

// TestNonRootDoctor runs the built doctor as a user who is neither root
// nor the runner's (a real process of uid 1001, doctor as uid 1002), on the
// live host: the kernel refuses it the runner's /proc/<pid>/environ. The
// checks that need the environment are unknown and say exactly that:
// doctor's uid, the runner's, the file, and the command to run instead;
// the run does not exit 0.
func TestNonRootDoctor(t *testing.T) {
	dir := openDir(t)
	cfg := filepath.Join(dir, "config.toml")
	cmdtest.NoErr(t, os.WriteFile(cfg, []byte(`concurrent = 1
[[runners]]
  name = "other-user"
  url = "https://gitlab.example.invalid/"
  executor = "kubernetes"
  [runners.kubernetes]
    namespace = "gitlab-runner"
`), 0o644))
	pid := startRunnerAs(t, dir, []string{"run", "--config", cfg}, []string{"KUBECONFIG=" + dir + "/kubeconfig", "PATH=/usr/bin:/bin", "HOME=" + dir})
	bin := filepath.Join(dir, "doctor")
	copyFile(t, cmdtest.BuildDoctor(t), bin, 0o755)
	cmd := exec.Command(bin, "run", "--root", "/", "--runner-pid", strconv.Itoa(pid), "--offline", "-o", "json", "--verbose")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "DOCTOR_LOOPBACK_ONLY=1"}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: doctorUID, Gid: doctorUID}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s\n%s", err, out.String(), errb.String())
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 || code != rep.Summary.ExitCode || len(rep.Summary.Incomplete) == 0 {
		t.Errorf("exit %d (report %d, incomplete %q): a run that could not read the environment is not a clean exit", code, rep.Summary.ExitCode, rep.Summary.Incomplete)
	}
	environ := "/proc/" + strconv.Itoa(pid) + "/environ"
	says := []string{
		environ + ": permission denied",
		"doctor runs as uid " + strconv.Itoa(doctorUID) + ", and only root or the runner's uid 1001 may read " + environ,
		"run `sudo doctor run` with the same flags instead",
		"`sudo -u '#1001' doctor run`",
	}
	for _, id := range []string{"runner-kubeconfig-env", "kubeconfig-file"} {
		st, why := checkStatus(&rep, id)
		if st != "unknown" {
			t.Errorf("%s is %s (%s); want unknown", id, st, why)
		}
		for _, want := range says {
			if !strings.Contains(why, want) {
				t.Errorf("%s does not say %q:\n%s", id, want, why)
			}
		}
	}
	// What a non-root user can read is still read: the process, its
	// config.toml.
	for _, id := range []string{"runner-process", "config-decode"} {
		if st, why := checkStatus(&rep, id); st != "pass" {
			t.Errorf("%s is %s (%s); want pass", id, st, why)
		}
	}
	if strings.Contains(out.String(), "uid -1") {
		t.Errorf("the report guesses uid -1:\n%s", out.String())
	}
}

func checkStatus(rep *report.Report, id string) (status, reason string) {
	for _, c := range rep.Checks {
		if c.ID == id {
			return string(c.Status), c.Reason
		}
	}
	return "", ""
}
