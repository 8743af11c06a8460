package redact

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestArgvKeepsTheRunnersOwnOptions(t *testing.T) {
	for _, argv := range [][]string{
		{"/usr/bin/gitlab-runner", "run", "--working-directory", "/home/gitlab-runner", "--config", "/etc/gitlab-runner/config.toml",
			"--service", "gitlab-runner", "--user", "gitlab-runner", "--syslog", "--listen-address", ":9252"},
		{"gitlab-runner", "--debug", "--log-level", "debug", "run", "-c", "/etc/x.toml", "-d", "/srv", "-u", "runner", "-n", "svc"},
		{"gitlab-runner", "--log-format=json", "-l", "info", "--cpuprofile", "/tmp/p", "run", "--config=/etc/y.toml", "--user=u"},
		{"gitlab-runner", "run-single", "--config", "/etc/z.toml"},
		{"gitlab-runner", "--help"},
	} {
		if got := Argv(argv, StandIn); !reflect.DeepEqual(got, argv) {
			t.Errorf("Argv(%q) = %q: it changed what is no secret", argv, got)
		}
	}
}

func TestArgvReplacesWhatNoListKeeps(t *testing.T) {
	const s = "Xq9Lm2Vt7Rp4Wk8Ys"
	for _, argv := range [][]string{
		{"gitlab-runner", "run-single", "--docker-password", s},    // not a flag of any version: replaced all the same
		{"gitlab-runner", "run-single", "--docker-password=" + s},  // the = form
		{"gitlab-runner", "run", "--unknown", s},                   // an unknown flag of run takes its word
		{"gitlab-runner", "run-single", "--ssh-password", "-" + s}, // a known flag takes its next word, dash or not
		{"gitlab-runner", "run-single", "-t", s},
		{"gitlab-runner", "register", "--non-interactive", "--registration-token", s},
		{"gitlab-runner", "register", "-r", s, "--locked"},
		{"gitlab-runner", "install", "--password", s},
		{"gitlab-runner", "run", "--", s},
		{"gitlab-runner", "run", "positional", s},
		{"gitlab-runner", "exec", "shell", s},
	} {
		got := Argv(argv, StandIn)
		if strings.Contains(strings.Join(got, " "), s) {
			t.Errorf("Argv(%q) = %q keeps the secret", argv, got)
		}
		if len(got) != len(argv) {
			t.Errorf("Argv(%q) = %q: not word for word", argv, got)
		}
	}
	// A boolean setting takes no word: the subcommand's next flag stays.
	got := Argv([]string{"gitlab-runner", "run-single", "--docker-privileged", "--config", "/etc/c.toml"}, StandIn)
	if got[3] != "--config" || got[4] != "/etc/c.toml" {
		t.Errorf("a boolean flag took the next word: %q", got)
	}
}

// secretKeys are the [runners.*] keys of the fidelity corpus (the runner's
// config.toml keys of every version, runnerconfig/testdata/*-keys.txt, read
// from its sources) whose name says secret (SecretKey) and that hold
// strings.
func secretKeys(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../../runnerconfig/testdata/gitlab-runner-v*-keys.txt")
	if len(files) == 0 {
		t.Fatal("no key lists")
	}
	seen := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "#") {
				continue
			}
			path, kind, _ := strings.Cut(l, "\t")
			last := path[strings.LastIndexByte(path, '.')+1:]
			kind, _, _ = strings.Cut(kind, "\t")
			if strings.HasPrefix(path, "runners.") && SecretKey(last) && strings.Contains(kind, "string") {
				seen[path] = true
			}
		}
		fh.Close()
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestArgvReplacesEverySecretSetting: every [runners.*] secret the
// fidelity corpus knows that the runner takes as a flag (run-single,
// register) is replaced in every form the runner parses, and so is every
// other setting: the list is derived from the runner's definitions, not
// from the names that look secret.
func TestArgvReplacesEverySecretSetting(t *testing.T) {
	const s = "Qv8Lm3Xt6Rp1Wk9Zs"
	settings := allSettings(t)
	byToml := map[string][]string{}
	for f, st := range settings {
		byToml[st.toml] = append(byToml[st.toml], f)
	}
	flagged := 0
	var noFlag []string
	for _, key := range secretKeys(t) {
		flags := byToml[key]
		if len(flags) == 0 {
			noFlag = append(noFlag, key) // the runner takes it only from config.toml
			continue
		}
		flagged++
		for _, f := range flags {
			if !settingFlags[f] {
				t.Errorf("%s (--%s) is a secret setting that settingFlags says takes no value", key, f)
			}
			for _, sub := range []string{"run-single", "register", "run", "unregister"} {
				for _, argv := range [][]string{
					{"gitlab-runner", sub, "--" + f, s, "--config", "/etc/c.toml"},
					{"gitlab-runner", sub, "--" + f + "=" + s},
					{"gitlab-runner", sub, "-" + f, s},
				} {
					got := Argv(argv, StandIn)
					if strings.Contains(strings.Join(got, "\x00"), s) {
						t.Errorf("%s: Argv(%q) = %q keeps it", key, argv, got)
					}
				}
			}
		}
	}
	for _, want := range []string{"runners.token", "runners.kubernetes.bearer_token", "runners.cache.s3.SecretKey", "runners.ssh.password"} {
		if len(byToml[want]) == 0 {
			t.Errorf("%s has no flag derived: the walk of the runner's structs is broken", want)
		}
	}
	if flagged < 8 {
		t.Errorf("only %d secret settings have flags", flagged)
	}
	t.Logf("%d secret settings are flags, all replaced; %d only config.toml takes", flagged, len(noFlag))
	// Every setting, secret-looking or not.
	for f, takes := range settingFlags {
		argv := []string{"gitlab-runner", "run-single", "--" + f + "=" + s}
		if takes {
			argv = []string{"gitlab-runner", "run-single", "--" + f, s}
		}
		if got := Argv(argv, StandIn); strings.Contains(strings.Join(got, " "), s) {
			t.Errorf("--%s: Argv keeps its value: %q", f, got)
		}
	}
	// No flag of run whose value is kept is a setting's name: run takes
	// none, and a kept name that were one would keep a setting's value
	// under run-single.
	for f := range runFlags {
		if f == "config" || f == "c" {
			continue
		}
		if _, ok := settingFlags[f]; ok && f != "u" {
			t.Logf("--%s is both run's option and a setting (kept only under run)", f)
		}
	}
}

// FuzzArgv: whatever the words, Argv keeps their number, every flag's
// name, and is idempotent (a stand-in is its own stand-in), so a command
// line redacted live, in the bundle and again in analyze reads the same.
func FuzzArgv(f *testing.F) {
	for _, s := range []string{"gitlab-runner\x00run\x00--config\x00/etc/c.toml", "gitlab-runner\x00run-single\x00--token\x00glrt-abc\x00-u\x00https://x",
		"gitlab-runner\x00--debug\x00run\x00--\x00x", "gitlab-runner\x00register\x00-r=\x00-n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		once := Argv(argv, StandIn)
		if len(once) != len(argv) {
			t.Fatalf("%q -> %q", argv, once)
		}
		for i, a := range argv {
			// A word grows by at most one stand-in: what redaction
			// keeps is bounded by what it was given.
			if len(once[i]) > len(a)+MaxStandInLen {
				t.Fatalf("word %q became %d bytes: %q", a, len(once[i]), once[i])
			}
			if i > 0 && a == "--" {
				break // what follows is arguments, every one replaced
			}
			if len(a) > 1 && a[0] == '-' && a != "--" && a != once[i] {
				name, _, _ := strings.Cut(a, "=")
				if !strings.HasPrefix(once[i], name) {
					// A flag's word may be another flag's value only.
					if i == 0 || !strings.HasPrefix(argv[i-1], "-") {
						t.Fatalf("flag %q became %q in %q", a, once[i], once)
					}
				}
			}
		}
		if twice := Argv(once, StandIn); !reflect.DeepEqual(once, twice) {
			t.Fatalf("not idempotent: %q -> %q -> %q", argv, once, twice)
		}
	})
}
