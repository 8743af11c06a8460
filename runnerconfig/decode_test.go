package runnerconfig

import (
	"bufio"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keyStrings(keys []toml.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}

// kindOf describes a Go type the way testdata/gitlab-runner-v19.2.1-keys.txt
// does.
func kindOf(t reflect.Type) (kind string, structType reflect.Type) {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "time.Duration", nil
	case t == reflect.TypeFor[time.Time]():
		return "time.Time", nil
	case t == reflect.TypeFor[StringOrArray]():
		return "StringOrArray", nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		k, st := kindOf(t.Elem())
		return "*" + k, st
	case reflect.Slice:
		k, st := kindOf(t.Elem())
		return "[]" + k, st
	case reflect.Map:
		k, st := kindOf(t.Elem())
		return "map[" + t.Key().Kind().String() + "]" + k, st
	case reflect.Struct:
		return "struct", t
	case reflect.Interface:
		return "any", nil
	}
	return t.Kind().String(), nil
}

func listKeys(t reflect.Type, prefix string, out *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("toml"), ",")[0]
		if !f.IsExported() || name == "-" || f.Anonymous {
			panic("unexpected field " + t.String() + "." + f.Name)
		}
		if name == "" {
			name = f.Name
		}
		k, st := kindOf(f.Type)
		line := prefix + name + "\t" + k
		if st != nil {
			line += "\t" + st.String()
		}
		*out = append(*out, line)
		if st != nil {
			listKeys(st, prefix+name+".", out)
		}
	}
}

// TestKeysMatchRunner checks every key path, Go kind and struct type name
// against the list read from gitlab-runner v19.2.1's source.
func TestKeysMatchRunner(t *testing.T) {
	var want []string
	sc := bufio.NewScanner(strings.NewReader(string(readFile(t, "gitlab-runner-v19.2.1-keys.txt"))))
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	var got []string
	listKeys(reflect.TypeFor[Config](), "", &got)

	if !slices.Equal(got, want) {
		gotSet := map[string]bool{}
		for _, l := range got {
			gotSet[l] = true
		}
		wantSet := map[string]bool{}
		for _, l := range want {
			wantSet[l] = true
			if !gotSet[l] {
				t.Errorf("missing: %s", l)
			}
		}
		for _, l := range got {
			if !wantSet[l] {
				t.Errorf("extra:   %s", l)
			}
		}
		if !t.Failed() {
			t.Errorf("same keys, different order")
		}
	}
}

func TestGuideUndecoded(t *testing.T) {
	data := readFile(t, "guide.toml")
	cfg, md, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}

	want := []string{"runners.run_untagged", "runners.tag_list", "runners.kubernetes.image_pull_policy"}
	if got := keyStrings(md.Undecoded()); !slices.Equal(got, want) {
		t.Errorf("Undecoded() = %q, want %q", got, want)
	}
	wantLines := []int{9, 10, 22}
	for i, k := range md.Undecoded() {
		if got := Locate(data, k); i < len(wantLines) && got != wantLines[i] {
			t.Errorf("Locate(%s) = %d, want %d", k, got, wantLines[i])
		}
	}

	if cfg.Concurrent != 2 || cfg.CheckInterval != 3 || len(cfg.Runners) != 1 {
		t.Fatalf("top level: %+v", cfg)
	}
	r := cfg.Runners[0]
	if r.Name != "kcp-tenant-kubernetes" || r.Executor != "kubernetes" || r.OutputLimit != 51200 ||
		!strings.HasPrefix(r.PreBuildScript, "if ! command -v pnpm") {
		t.Errorf("runner: %+v", r)
	}
	k := r.Kubernetes
	if k == nil || k.Host != "" || k.Namespace != "gitlab-runner" || k.PullPolicy != nil ||
		k.CPURequest != "100m" || k.MemoryLimit != "20Gi" || k.HelperMemoryLimit != "1Gi" ||
		k.PollTimeout != 3600 || k.CleanupGracePeriodSeconds == nil || *k.CleanupGracePeriodSeconds != 30 {
		t.Fatalf("kubernetes: %+v", k)
	}
	anti := k.Affinity.PodAntiAffinity
	if anti == nil || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("pod_anti_affinity: %+v", anti)
	}
	term := anti.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != "kubernetes.io/hostname" || term.LabelSelector == nil ||
		len(term.LabelSelector.MatchExpressions) != 1 ||
		!reflect.DeepEqual(term.LabelSelector.MatchExpressions[0], NodeSelectorRequirement{Key: "project.runner.gitlab.com/id", Operator: "Exists"}) {
		t.Errorf("anti-affinity term: %+v", term)
	}
	if k.Autoscaler != nil {
		t.Errorf("autoscaler set without a table: %+v", k.Autoscaler)
	}
}

// The guide's "Pause pods" block is the runner's own
// [runners.kubernetes.autoscaler]: appended to the guide's file it decodes
// and adds nothing to Undecoded.
func TestGuidePausePods(t *testing.T) {
	data := append(readFile(t, "guide.toml"), readFile(t, "guide_pause_pods.fragment.toml")...)
	cfg, md, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"runners.run_untagged", "runners.tag_list", "runners.kubernetes.image_pull_policy"}
	if got := keyStrings(md.Undecoded()); !slices.Equal(got, want) {
		t.Errorf("Undecoded() = %q, want %q", got, want)
	}
	a := cfg.Runners[0].Kubernetes.Autoscaler
	if a == nil || a.MaxPausePods != 1 || a.PausePodImage != "registry.k8s.io/pause:3.10" ||
		a.PausePodPriorityClassName != "gitlab-pause" || len(a.Policy) != 1 ||
		a.Policy[0].IdleCount != 0 || a.Policy[0].IdleTime != time.Minute {
		t.Errorf("autoscaler: %+v", a)
	}
	if len(SpecOnlyKeys) != 0 {
		t.Errorf("SpecOnlyKeys = %v; every spec key exists in the runner", SpecOnlyKeys)
	}
}

func TestDeckhouseExamples(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  []byte
		check func(t *testing.T, c *Config)
	}{
		{"instance", readFile(t, "deckhouse_instance.toml"), func(t *testing.T, c *Config) {
			r := c.Runners[0]
			a := r.Autoscaler
			if r.Executor != "instance" || r.Shell != "bash" || a == nil || a.Plugin != "fleeting-plugin-dvp" ||
				a.MaxInstances != 5 || a.PluginConfig["namespace"] != "code-runner-dvp" ||
				a.PluginConfig["name"] != "code-runner" || a.ConnectorConfig.Username != "gitlab-runner" ||
				a.ConnectorConfig.KeyPathname != "/ssh/id_ed25519" || !a.ConnectorConfig.UseStaticCredentials ||
				a.ConnectorConfig.UseExternalAddr || len(a.Policy) != 1 || a.Policy[0].IdleCount != 1 ||
				a.Policy[0].IdleTime != 20*time.Minute {
				t.Errorf("autoscaler: %+v", a)
			}
		}},
		{"instance with state_storage", append(readFile(t, "deckhouse_instance.toml"), readFile(t, "deckhouse_state_storage.fragment.toml")...), func(t *testing.T, c *Config) {
			s := c.Runners[0].Autoscaler.StateStorage
			if s != (StateStorage{Enabled: true, Dir: "/home/gitlab-runner/state", KeepInstanceWithAcquisitions: true}) {
				t.Errorf("state_storage: %+v", s)
			}
		}},
		{"kubernetes", readFile(t, "deckhouse_kubernetes.toml"), func(t *testing.T, c *Config) {
			k := c.Runners[0].Kubernetes
			if c.Concurrent != 4 || k == nil || k.Namespace != "code-runner" || k.Image != "alpine:3" ||
				!strings.HasSuffix(k.HelperImage, "/runner-helper:<VERSION>") {
				t.Errorf("kubernetes: %+v", k)
			}
		}},
		{"docker", readFile(t, "deckhouse_docker.toml"), func(t *testing.T, c *Config) {
			d := c.Runners[0].Docker
			if d == nil || d.Image != "alpine:3" || !strings.HasSuffix(d.HelperImage, "/runner-helper:<VERSION>") ||
				!slices.Equal(d.Volumes, []string{"/cache"}) || c.SessionServer.SessionTimeout != 1800 ||
				c.Runners[0].Cache == nil || c.Runners[0].Cache.S3 == nil || !c.Runners[0].TokenObtainedAt.IsZero() {
				t.Errorf("docker: %+v", d)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, md, err := Decode(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if u := md.Undecoded(); len(u) != 0 {
				t.Errorf("Undecoded() = %q, want none", keyStrings(u))
			}
			tc.check(t, cfg)
		})
	}
}

func TestErrors(t *testing.T) {
	guide := string(readFile(t, "guide.toml"))
	for _, tc := range []struct {
		name, data, want string
		line             int // 0: not a toml.ParseError
	}{
		{
			name: "output_limit = = 5",
			data: strings.Replace(guide, "output_limit = 51200", "output_limit = = 5", 1),
			want: `toml: line 16 (last key "runners.output_limit"): expected value but found '=' instead`,
			line: 16,
		},
		{
			name: "the spec's own line 9",
			data: "concurrent = 2\ncheck_interval = 3\n\n[[runners]]\n  name = \"x\"\n  url = \"https://gitlab.example/\"\n  token = \"t\"\n  executor = \"kubernetes\"\n  output_limit = = 51200\n",
			want: `toml: line 9 (last key "runners.output_limit"): expected value but found '=' instead`,
			line: 9,
		},
		{
			name: "pre_build_script as an array",
			data: "[[runners]]\n  executor = \"kubernetes\"\n  pre_build_script = [\"a\"]\n",
			want: `toml: line 3 (last key "runners.pre_build_script"): incompatible types: TOML value has type []any; destination has type string`,
		},
		{
			name: "output_limit as a string",
			data: "[[runners]]\noutput_limit = \"50MB\"\n",
			want: `toml: line 2 (last key "runners.output_limit"): incompatible types: TOML value has type string; destination has type integer`,
		},
		{
			name: "poll_timeout as a duration",
			data: "[[runners]]\n[runners.kubernetes]\npoll_timeout = \"1h\"\n",
			want: `toml: line 3 (last key "runners.kubernetes.poll_timeout"): incompatible types: TOML value has type string; destination has type integer`,
		},
		{
			name: "kubernetes as a string names the runner's Go type",
			data: "[[runners]]\nkubernetes = \"yes\"\n",
			want: `toml: line 2 (last key "runners.kubernetes"): type mismatch for common.KubernetesConfig: expected table but found string`,
		},
		{
			name: "cache as a string names the runner's Go type",
			data: "[[runners]]\ncache = \"s3\"\n",
			want: `toml: line 2 (last key "runners.cache"): type mismatch for cacheconfig.Config: expected table but found string`,
		},
		{
			name: "idle_time that is not a duration",
			data: "[[runners]]\n[runners.autoscaler]\n[[runners.autoscaler.policy]]\nidle_time = \"20 minutes\"\n",
			want: `toml: line 4 (last key "runners.autoscaler.policy.idle_time"): invalid duration: "20 minutes"`,
			line: 4,
		},
		{
			name: "pull_policy number",
			data: "[[runners]]\n[runners.kubernetes]\npull_policy = 5\n",
			want: `toml: line 3 (last key "runners.kubernetes.pull_policy"): cannot load value of type int64 into a StringOrArray`,
			line: 3,
		},
		{
			name: "pull_policy array with a number",
			data: "[[runners]]\n[runners.docker]\npull_policy = [\"always\", 1]\n",
			want: `toml: line 3 (last key "runners.docker.pull_policy"): cannot load value of type int64 into a StringOrArray`,
			line: 3,
		},
		{
			name: "nfs volume missing fields",
			data: "[[runners]]\n[runners.kubernetes]\n[[runners.kubernetes.volumes.nfs]]\nname = \"n\"\npath = 7\n",
			want: `toml: line 3 (last key "runners.kubernetes.volumes.nfs"): nfs volume: missing required fields: mount_path, server, path`,
			line: 3,
		},
		{
			name: "nfs volume not a table",
			data: "[[runners]]\n[runners.kubernetes.volumes]\nnfs = [\"x\"]\n",
			want: `toml: line 3 (last key "runners.kubernetes.volumes.nfs"): nfs volume: expected a table, got string`,
			line: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Decode([]byte(tc.data))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tc.want)
			}
			if tc.line != 0 {
				var pe toml.ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("%T is not a toml.ParseError", err)
				}
				if pe.Position.Line != tc.line {
					t.Errorf("ParseError line %d, want %d", pe.Position.Line, tc.line)
				}
			}
			if got, want := LoadError(err).Error(), "decoding configuration file: "+tc.want; got != want {
				t.Errorf("LoadError: %s", got)
			}
		})
	}
	if LoadError(nil) != nil {
		t.Error("LoadError(nil) != nil")
	}
}

// Behaviours of the decoder that doctor's findings depend on; all hold for
// the runner because it decodes with the same library into the same kinds.
func TestDecodeSemantics(t *testing.T) {
	for _, tc := range []struct {
		name      string
		data      string
		undecoded []string
		check     func(*Config) bool
	}{
		{
			name: "keys match case-insensitively",
			data: "Concurrent = 3\n[[runners]]\nExecutor = \"shell\"\n[runners.cache]\ntype = \"s3\"\n",
			check: func(c *Config) bool {
				return c.Concurrent == 3 && c.Runners[0].Executor == "shell" && c.Runners[0].Cache.Type == "s3"
			},
		},
		{
			name: "pull_policy string",
			data: "[[runners]]\n[runners.kubernetes]\npull_policy = \"if-not-present\"\n",
			check: func(c *Config) bool {
				return slices.Equal(c.Runners[0].Kubernetes.PullPolicy, StringOrArray{"if-not-present"})
			},
		},
		{
			name: "pull_policy array",
			data: "[[runners]]\n[runners.docker]\npull_policy = [\"always\", \"if-not-present\"]\n",
			check: func(c *Config) bool {
				return slices.Equal(c.Runners[0].Docker.PullPolicy, StringOrArray{"always", "if-not-present"})
			},
		},
		{
			name: "unknown key inside an nfs volume is not undecoded",
			data: "[[runners]]\n[[runners.kubernetes.volumes.nfs]]\nname = \"n\"\nmount_path = \"/m\"\nserver = \"s\"\npath = \"/p\"\nbogus = 1\nread_only = \"yes\"\n",
			check: func(c *Config) bool {
				v := c.Runners[0].Kubernetes.Volumes.NFSVolumes
				return len(v) == 1 && v[0].Server == "s" && !v[0].ReadOnly
			},
		},
		{
			name:      "tables nested in plugin_config are undecoded",
			data:      "[[runners]]\n[runners.autoscaler.plugin_config]\nname = \"pool\"\n[runners.autoscaler.plugin_config.labels]\nteam = \"ci\"\n",
			undecoded: []string{"runners.autoscaler.plugin_config.labels.team"},
			check: func(c *Config) bool {
				m, ok := c.Runners[0].Autoscaler.PluginConfig["labels"].(map[string]any)
				return ok && m["team"] == "ci"
			},
		},
		{
			name:      "a misspelt table is undecoded with everything in it",
			data:      "[[runners]]\n[runners.kubernete]\nnamespace = \"x\"\n",
			undecoded: []string{"runners.kubernete", "runners.kubernete.namespace"},
			check:     func(c *Config) bool { return c.Runners[0].Kubernetes == nil },
		},
		{
			name: "durations from strings and integers",
			data: "connection_max_age = \"15m\"\n[[runners]]\n[runners.autoscaler]\ninstance_acquire_timeout = 1000000000\n",
			check: func(c *Config) bool {
				return *c.ConnectionMaxAge == 15*time.Minute && c.Runners[0].Autoscaler.InstanceAcquireTimeout == time.Second
			},
		},
		{
			name: "machine keys are CamelCase",
			data: "[[runners]]\n[runners.machine]\nIdleCount = 2\nMachineDriver = \"google\"\n[[runners.machine.autoscaling]]\nPeriods = [\"* * 9-17 * * mon-fri *\"]\nIdleCount = 5\n",
			check: func(c *Config) bool {
				m := c.Runners[0].Machine
				return m.IdleCount == 2 && m.MachineDriver == "google" && m.AutoscalingConfigs[0].IdleCount == 5
			},
		},
		{
			name:  "token_obtained_at as a string (time.Time is a TextUnmarshaler)",
			data:  "[[runners]]\ntoken_obtained_at = \"2025-01-02T03:04:05Z\"\n",
			check: func(c *Config) bool { return c.Runners[0].TokenObtainedAt.Year() == 2025 },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, md, err := Decode([]byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := keyStrings(md.Undecoded()); !slices.Equal(got, tc.undecoded) && (len(got) != 0 || len(tc.undecoded) != 0) {
				t.Errorf("Undecoded() = %q, want %q", got, tc.undecoded)
			}
			if !tc.check(cfg) {
				t.Errorf("decoded wrongly: %+v", cfg)
			}
		})
	}
}
