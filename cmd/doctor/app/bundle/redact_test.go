package bundle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

// Every planted secret is gone from what the bundle keeps, and what the
// checks read of it stays: line numbers, key names, token kinds, paths,
// booleans and numbers.
func TestRedactKeepsShapeNotSecrets(t *testing.T) {
	secrets := []string{"glrt-t0pS3cretRunnerTok3n", "hunter2hunter2", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMIK7MDENGbPxRfiCY", "s3cr3tDbPass"}
	toml := "concurrent = 4\n[[runners]]\n  name = \"a\"\n  url = \"https://gitlab.example.invalid\"\n  token = \"glrt-t0pS3cretRunnerTok3n\"\n" +
		"  [runners.cache.s3]\n    AccessKey = \"AKIAIOSFODNN7EXAMPLE\"\n    SecretKey = \"wJalrXUtnFEMIK7MDENGbPxRfiCY\"\n" +
		"  [runners.autoscaler.connector_config]\n    key_path = \"/ssh/id_ed25519\"\n    use_static_credentials = true\n" +
		"  environment = [\"DATABASE_URL=postgres://app:s3cr3tDbPass@db.example.invalid/app\"]\n"
	environ := []byte("HOME=/root\x00KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml\x00DB_PASSWORD=hunter2hunter2\x00HTTP_PROXY=http://u:hunter2hunter2@proxy.invalid:3128\x00")
	unit := "[Service]\nEnvironment=\"RUNNER_TOKEN=glrt-t0pS3cretRunnerTok3n\" \"KUBECONFIG=/etc/k.yaml\"\n"
	si := newStandIns()
	out := map[string][]byte{}
	out["/etc/gitlab-runner/config.toml"], _ = redactFile(si, "/etc/gitlab-runner/config.toml", []byte(toml))
	out["/proc/1/environ"], _ = redactFile(si, "/proc/1/environ", environ)
	out["/etc/systemd/system/gitlab-runner.service.d/env.conf"], _ = redactFile(si, "/etc/systemd/system/gitlab-runner.service.d/env.conf", []byte(unit))
	out["/var/run/secrets/kubernetes.io/serviceaccount/token"], _ = redactFile(si, "/var/run/secrets/kubernetes.io/serviceaccount/token", []byte("eyJhbGciOiJSUzI1NiJ9.payload.sig"))
	for p, b := range out {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(s[:8])) && len(s) > 12 && bytes.Contains(b, []byte(s[len(s)-8:])) {
				t.Errorf("%s keeps %q:\n%s", p, s, b)
			}
		}
	}
	cfg := string(out["/etc/gitlab-runner/config.toml"])
	if strings.Count(cfg, "\n") != strings.Count(toml, "\n") {
		t.Errorf("config.toml lines moved:\n%s", cfg)
	}
	for _, keep := range []string{`token = "glrt-REDACTED-`, `key_path = "/ssh/id_ed25519"`, "use_static_credentials = true", "concurrent = 4", "postgres://app:"} {
		if !strings.Contains(cfg, keep) {
			t.Errorf("config.toml lost %q:\n%s", keep, cfg)
		}
	}
	env := string(out["/proc/1/environ"])
	if !strings.Contains(env, "KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml\x00") || strings.Count(env, "\x00") != 4 {
		t.Errorf("environ lost its shape: %q", env)
	}
	if got := string(out["/var/run/secrets/kubernetes.io/serviceaccount/token"]); !strings.Contains(got, "REDACTED-") {
		t.Errorf("a token file is kept: %q", got)
	}
}

// A stand-in is deterministic and idempotent: the key a request was
// recorded under is found again when analyze builds it from the stand-in.
func TestStandInIsIdempotent(t *testing.T) {
	s := redact.StandIn("glrt-abcdefghijklmnop")
	if !strings.HasPrefix(s, "glrt-REDACTED-") || redact.StandIn(s) != s || redact.StandIn("glrt-abcdefghijklmnop") != s {
		t.Errorf("StandIn: %q, again %q", s, redact.StandIn(s))
	}
	if redact.StandIn("glrt-other") == s {
		t.Error("two secrets, one stand-in")
	}
}

// Garbage, huge and hostile JSON bodies are redacted without a panic, and
// secrets under secret-looking keys and in secret env entries go.
func TestRedactJSON(t *testing.T) {
	body := `{"items":[{"spec":{"containers":[{"env":[{"name":"CI_JOB_TOKEN","value":"glcbt-64_abcdefghijklmnopqrst"},{"name":"PLAIN","value":"ok"}]}]}}],"token":"glrt-zzzzzzzzzzzzzzzz"}`
	got := string(redactJSON([]byte(body)))
	if strings.Contains(got, "abcdefghijklmnopqrst") || strings.Contains(got, "zzzzzzzzzzzz") || !strings.Contains(got, `"value":"ok"`) {
		t.Errorf("redactJSON: %s", got)
	}
	for _, junk := range []string{"", "{", "[[[[", strings.Repeat("[", 10000), "\xff\xfe"} {
		_ = redactJSON([]byte(junk))
	}
}

// The forms the first text redactor missed: a TOML array under a secret
// key and a JSON-style quoted key. Each value goes, the syntax stays.
func TestRedactArraysAndQuotedKeys(t *testing.T) {
	for in, keep := range map[string]string{
		`credential = ["s3cretVal123", "s3cretVal456"]`: `credential = ["REDACTED-`,
		`api_key = ['s3cretVal123']`:                    `api_key = ['REDACTED-`,
		`"password": "s3cretVal123"`:                    `"password": "REDACTED-`,
	} {
		out, _ := redactText([]byte(in))
		if strings.Contains(string(out), "s3cretVal") || !strings.HasPrefix(string(out), keep) {
			t.Errorf("redactText(%q) = %q", in, out)
		}
	}
}

// What a kubeconfig or config.toml can hold a secret in besides a
// secret-named key's plain value: each becomes a stand-in, and the file
// keeps its shape.
func TestRedactTextShapesOfSecrets(t *testing.T) {
	for _, tc := range []struct{ in, secret, keep string }{
		{"users:\n- name: u\n  user:\n    token: [Tk9Qz2Lm5Tx8Wb3]\n", "Tk9Qz2Lm5Tx8Wb3", "token: [REDACTED-"},
		{"    password: {x: Pw9Qz2Lm5Tx8Wb3}\n", "Pw9Qz2Lm5Tx8Wb3", "password: {x: REDACTED-"},
		{"      env: [{name: AWS_SECRET_ACCESS_KEY, value: Ak9Qz2Lm5Tx8Wb3}]\n", "Ak9Qz2Lm5Tx8Wb3", "name: AWS_SECRET_ACCESS_KEY, value: REDACTED-"},
		{"      env:\n      - name: DB_PASSWORD\n        value: \"Db9Qz2Lm5Tx8Wb3\"\n", "Db9Qz2Lm5Tx8Wb3", `value: "REDACTED-`},
		{`      args: ["--token", "Ar9Qz2Lm5Tx8Wb3", "--cluster", "tenant-ci"]` + "\n", "Ar9Qz2Lm5Tx8Wb3", `"--cluster", "tenant-ci"`},
		{"  output_limit = 'Ol9Qz2Lm5Tx8Wb3x'\n", "Ol9Qz2Lm5Tx8Wb3x", "output_limit = 'REDACTED-"},
		{"    server: https://Us9Qz2Lm5Tx8Wb3:pw@127.0.0.1:1/x\n", "Us9Qz2Lm5Tx8Wb3", "@127.0.0.1:1/x"},
		{"  url = \"https://gitlab-ci-token:Pw9Qz2Lm5Tx8@gitlab.invalid/\"\n", "Pw9Qz2Lm5Tx8", "https://gitlab-ci-token:REDACTED-"},
		// kubectl writes an exec plugin's args as a block sequence.
		{"      args:\n      - get-token\n      - --token\n      - Bs9Qz2Lm5Tx8Wb3\n      - --cluster\n      - tenant-ci\n", "Bs9Qz2Lm5Tx8Wb3", "- --cluster\n      - tenant-ci"},
		{"      args:\n      - --password=Fa9Qz2Lm5Tx8Wb3\n", "Fa9Qz2Lm5Tx8Wb3", "- --password=REDACTED-"},
	} {
		out, _ := redactText([]byte(tc.in))
		if strings.Contains(string(out), tc.secret) {
			t.Errorf("redactText kept %q:\n%s", tc.secret, out)
		}
		if !strings.Contains(string(out), tc.keep) {
			t.Errorf("redactText lost %q:\n%s", tc.keep, out)
		}
		if strings.Count(string(out), "\n") != strings.Count(tc.in, "\n") {
			t.Errorf("lines moved:\n%s", out)
		}
	}
}

// The running manager's answer for the unit (systemctl show, recorded by
// systemd.Ask) keeps the values of the variables a check reads and stand-ins
// for every other: a token in an Environment= of the unit never reaches
// the bundle, in the answer or in its ExecStart= words.
func TestRedactSystemdShow(t *testing.T) {
	const token = "glrt-Zx8sEcretTokenValue123"
	show := &systemd.Show{LoadState: "loaded",
		Environment:      []string{"KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml", "RUNNER_TOKEN=" + token},
		UnsetEnvironment: []string{"HTTPS_PROXY", "RUNNER_TOKEN=" + token},
		ExecStart:        []systemd.ShowExec{{Path: "/usr/bin/gitlab-runner", Argv: "/usr/bin/gitlab-runner run --token " + token}}}
	tape := hostio.NewTape()
	if _, err := hostio.Probe(&hostio.Env{Tape: tape}, systemd.ProbeKind, "gitlab-runner.service", func() (*systemd.Show, error) { return show, nil }); err != nil {
		t.Fatal(err)
	}
	_, probes, _, _ := redactTape(tape)
	rec := probes[systemd.ProbeKind+" gitlab-runner.service"]
	if rec == nil || strings.Contains(string(rec.Value), token) {
		t.Fatalf("the bundle keeps: %s", rec.Value)
	}
	var back systemd.Show
	if err := json.Unmarshal(rec.Value, &back); err != nil {
		t.Fatal(err)
	}
	if back.Environment[0] != "KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml" || !strings.HasPrefix(back.Environment[1], "RUNNER_TOKEN=") || back.UnsetEnvironment[0] != "HTTPS_PROXY" {
		t.Errorf("redacted: %+v", back)
	}
}
