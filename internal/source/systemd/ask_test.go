package systemd

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/realsystemd"
)

// On a live host the running manager's answer is the unit's: here a drop-in
// that resets Environment= was written after the last daemon-reload, so
// the files say no KUBECONFIG while systemd, which is what starts the
// runner, still has it; and a drop-in systemd has loaded but the model
// would not read the same way is taken as systemd says. The answer is
// recorded in the tape, and replayed without running anything.
func TestAskUsesTheRunningManager(t *testing.T) {
	m := realsystemd.Start(t)
	defer func(old []string) { systemctl = old }(systemctl)
	systemctl = m.SystemctlArgv()
	files := map[string]realsystemd.File{
		"/lib/systemd/system/gitlab-runner.service":                   {Content: "[Service]\nExecStart=/usr/bin/gitlab-runner run --working-directory /home/gitlab-runner\nUser=gitlab-runner\n"},
		"/etc/systemd/system/gitlab-runner.service.d/kubeconfig.conf": {Content: "[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml\n"},
		// Loaded and kept, as a running runner's unit is: the manager
		// drops a unit nothing references, and reads it afresh when asked.
		"/run/systemd/system/" + realsystemd.Target + ".d/keep.conf": {Content: "[Unit]\nAfter=gitlab-runner.service\n"},
	}
	if err := m.Layout(files); err != nil {
		t.Fatal(err)
	}
	late := "/etc/systemd/system/gitlab-runner.service.d/override.conf"
	files[late] = realsystemd.File{Content: "[Service]\nEnvironment=\nEnvironment=HTTPS_PROXY=http://proxy:3128\n"}
	if err := m.Write(late, files[late]); err != nil {
		t.Fatal(err)
	}
	u, _ := modelOf(t, m.MergedUsr, diffRow{name: "not reloaded", unit: "gitlab-runner.service", files: files})
	if vars, _ := u.Environ(); vars["KUBECONFIG"] != "" {
		t.Fatalf("the files' model: %v", vars)
	}
	tape := hostio.NewTape()
	live := &hostio.Env{Root: "/", Tape: tape}
	show, err := Ask(context.Background(), live, "gitlab-runner.service")
	if err != nil {
		t.Fatal(err)
	}
	if !show.NeedDaemonReload || show.LoadState != "loaded" {
		t.Errorf("systemd: %+v", show)
	}
	u.UseSystemd(live, show)
	vars, origin := u.Environ()
	if vars["KUBECONFIG"] != "/etc/gitlab-runner/kubeconfig.yaml" || vars["HTTPS_PROXY"] != "" {
		t.Errorf("with systemd's answer: %v", vars)
	}
	if origin["KUBECONFIG"].Path != "/etc/systemd/system/gitlab-runner.service.d/kubeconfig.conf" {
		t.Errorf("KUBECONFIG from %v: the line the files set it with, which systemd agrees with", origin["KUBECONFIG"])
	}
	if !slices.Contains(u.Overridden, "Environment") || !slices.Contains(u.Overridden, "DropInPaths") {
		t.Errorf("Overridden = %q", u.Overridden)
	}

	// Replayed: the bundle's answer, and nothing runs.
	raw, err := json.Marshal(tape.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	replay := &hostio.Tape{}
	if err := json.Unmarshal(raw, replay); err != nil {
		t.Fatal(err)
	}
	replay.Replay = true
	systemctl = []string{"false"}
	again, err := Ask(context.Background(), &hostio.Env{Root: t.TempDir(), Tape: replay}, "gitlab-runner.service")
	if err != nil || !reflect.DeepEqual(again, show) {
		t.Errorf("replayed: %+v, %v; want %+v", again, err, show)
	}
	// A bundle made without the answer: the model, no error.
	if s, err := Ask(context.Background(), &hostio.Env{Root: t.TempDir(), Tape: replay}, "other.service"); s != nil || err != nil {
		t.Errorf("not in the bundle: %+v, %v", s, err)
	}
}

// Under another root nothing is asked; a host whose systemctl cannot
// answer is an error the caller keeps the model with.
func TestAskOnlyOnALiveHost(t *testing.T) {
	defer func(old []string) { systemctl = old }(systemctl)
	systemctl = []string{"false"}
	if s, err := Ask(context.Background(), &hostio.Env{Root: t.TempDir()}, "gitlab-runner.service"); s != nil || err != nil {
		t.Errorf("under --root: %+v, %v", s, err)
	}
	if _, err := Ask(context.Background(), &hostio.Env{Root: "/"}, "gitlab-runner.service"); err == nil {
		t.Error("a systemctl that fails answered")
	}
	systemctl = []string{"doctor-no-such-tool"}
	if _, err := Ask(context.Background(), &hostio.Env{Root: "/"}, "gitlab-runner.service"); !errors.Is(err, hostio.ErrToolMissing) {
		t.Errorf("no systemctl: %v", err)
	}
	if _, err := Ask(context.Background(), &hostio.Env{Root: "/"}, "bad name"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("a name systemd refuses was asked: %v", err)
	}
}
