package testproc

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// RunnerUID is the uid, primary group and fsGroup-like supplementary group
// the document's Deployment runs the runner with.
const RunnerUID = 1001

// Fleeting is a host of an instance runner with the fleeting plugin
// fleeting-plugin-dvp, as the document deploys it: the plugin on PATH, the
// connector key root:1001 0440 (fsGroup with defaultMode 0440), the state
// directory 1001's own. Start runs a real runner on it as uid 1001.
type Fleeting struct {
	Dir        string // traversable by uid 1001 (OpenDir)
	Bin        string // on the runner's PATH; holds fleeting-plugin-dvp
	KeyFile    string // an ed25519 key minted now
	Persistent string // a state directory on the disk Dir is on
	Config     string // config.toml, written by Write
}

// NewFleeting lays out the host under a new OpenDir; it needs root.
func NewFleeting(t testing.TB) *Fleeting {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test chowns files to uid 1001 and needs root, as CI has")
	}
	dir := OpenDir(t)
	f := &Fleeting{Dir: dir, Bin: filepath.Join(dir, "bin"), KeyFile: filepath.Join(dir, "ssh", "id_ed25519"),
		Persistent: filepath.Join(dir, "state"), Config: filepath.Join(dir, "config.toml")}
	must(t, os.Mkdir(f.Bin, 0o755))
	must(t, os.WriteFile(filepath.Join(f.Bin, "fleeting-plugin-dvp"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	must(t, os.Mkdir(filepath.Dir(f.KeyFile), 0o755))
	key, _, err := testpki.SSHKey("ed25519", "real-process")
	must(t, err)
	must(t, os.WriteFile(f.KeyFile, key, 0o440))
	must(t, os.Chown(f.KeyFile, 0, RunnerUID))
	must(t, os.Mkdir(f.Persistent, 0o700))
	must(t, os.Chown(f.Persistent, RunnerUID, RunnerUID))
	return f
}

// Write writes config.toml with its state_storage in stateDir.
func (f *Fleeting) Write(t testing.TB, stateDir string) {
	t.Helper()
	must(t, os.WriteFile(f.Config, []byte(`concurrent = 2
[[runners]]
  name = "dvp-real"
  url = "https://code.example.invalid"
  token = "glrt-notARealToken5"
  executor = "instance"
  shell = "bash"
  [runners.autoscaler]
    plugin = "fleeting-plugin-dvp"
    max_instances = 2
    [runners.autoscaler.connector_config]
      username = "gitlab-runner"
      key_path = "`+f.KeyFile+`"
      use_static_credentials = true
      use_external_addr = true
    [runners.autoscaler.state_storage]
      enabled = true
      dir = "`+stateDir+`"
      keep_instance_with_acquisitions = true
`), 0o644))
}

// Start runs `gitlab-runner run --config <Config>` as uid 1001 with groups
// 1001, PATH holding Bin, from dir (OpenDir), and returns its pid. helper
// is the calling package's test whose body is Child.
func (f *Fleeting) Start(t testing.TB, helper, dir string) int {
	t.Helper()
	return Start(t, Runner{Helper: helper, Dir: dir, Args: []string{"run", "--config", f.Config},
		Env:  []string{"PATH=" + f.Bin + ":/usr/bin:/bin", "HOME=" + f.Dir},
		Cred: &syscall.Credential{Uid: RunnerUID, Gid: RunnerUID, Groups: []uint32{RunnerUID}}})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
