package nodelocaldns

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// These tests choose the server and never ask it: 169.254.20.10 is not
// contacted by any test.

func write(t *testing.T, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestProbeServer(t *testing.T) {
	plain := t.TempDir()
	podEnv := t.TempDir()
	write(t, podEnv, "/proc/self/environ", "PATH=/bin\x00KUBERNETES_SERVICE_HOST=127.0.0.1\x00")
	podSA := t.TempDir()
	write(t, podSA, "/var/run/secrets/kubernetes.io/serviceaccount/token", "not a token")
	hostEnv := t.TempDir()
	write(t, hostEnv, "/proc/self/environ", "PATH=/bin\x00HOME=/root\x00")

	cases := []struct {
		name, root, setting string
		server, why         string
	}{
		{"elsewhere-no-probe", plain, "", "", ""},
		{"host-environment-no-probe", hostEnv, "", "", ""},
		// A fixture root that looks like a pod never sends the probe to the
		// production default: only a live host (--root /) can be a pod.
		{"fixture-pod-environment-no-probe", podEnv, "", "", ""},
		{"fixture-pod-service-account-no-probe", podSA, "", "", ""},
		{"setting-wins", podEnv, "127.0.0.1:5353", "127.0.0.1:5353", "--dns-server"},
		{"bare-address-gets-port-53", plain, "127.0.0.2", "127.0.0.2:53", "--dns-server"},
		{"bare-ipv6-gets-port-53", plain, "::1", "[::1]:53", "--dns-server"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := &hostio.Env{Root: tc.root, Settings: map[string]string{}}
			if tc.setting != "" {
				env.Settings[nodedns.ServerSetting.Name] = tc.setting
			}
			server, why := nodedns.ProbeServer(env)
			if server != tc.server || !strings.Contains(why, tc.why) {
				t.Errorf("probeServer = %q, %q; want %q, containing %q", server, why, tc.server, tc.why)
			}
		})
	}
}

// TestPodSignals is the in-pod detection itself, read from fixture roots.
func TestPodSignals(t *testing.T) {
	podEnv := t.TempDir()
	write(t, podEnv, "/proc/self/environ", "PATH=/bin\x00KUBERNETES_SERVICE_HOST=127.0.0.1\x00")
	podSA := t.TempDir()
	write(t, podSA, "/var/run/secrets/kubernetes.io/serviceaccount/token", "not a token")
	if why := nodedns.PodSignals(&hostio.Env{Root: podEnv}); !strings.Contains(why, "KUBERNETES_SERVICE_HOST=127.0.0.1") {
		t.Errorf("environment: %q", why)
	}
	if why := nodedns.PodSignals(&hostio.Env{Root: podSA}); !strings.Contains(why, "serviceaccount exists") {
		t.Errorf("service account: %q", why)
	}
	if why := nodedns.PodSignals(&hostio.Env{Root: t.TempDir()}); why != "" {
		t.Errorf("plain root: %q", why)
	}
}

func TestTargets(t *testing.T) {
	got := nodedns.Targets(config(t), "https://gitlab-ci-token:secret-job-token@git.example.invalid/group/project.git")
	var s []string
	for _, x := range got {
		s = append(s, x.Name+"="+x.URL)
	}
	want := "git.example.invalid=https://git.example.invalid/group/project.git|" +
		gitlabHost + "=https://" + gitlabHost + ":8443/|" + nodedns.ServiceName + "="
	if strings.Join(s, "|") != want {
		t.Errorf("targets\n%s\nwant\n%s", strings.Join(s, "|"), want)
	}
	// The same host once; an address is not looked up; an undecodable
	// config.toml leaves the service name.
	got = nodedns.Targets(config(t), "https://"+gitlabHost+"/group/project.git")
	if len(got) != 2 {
		t.Errorf("duplicate host asked twice: %v", got)
	}
	if got = nodedns.Targets(nil, "http://10.1.2.3/x.git"); len(got) != 1 || got[0].Name != nodedns.ServiceName {
		t.Errorf("targets of an address and no config: %v", got)
	}
}
