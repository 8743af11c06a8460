package keylist

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "example.com/runner"

// tree writes files (slash paths relative to the module root) into a temp
// directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, src := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func lines(r *Result) []string {
	var out []string
	for _, l := range r.Lines {
		out = append(out, l.String())
	}
	return out
}

var sample = map[string]string{
	"common/config.go": `package common

import (
	"time"

	"example.com/runner/helpers/creds"
	cc "example.com/runner/cache/cacheconfig"
	"example.com/runner/common/config/runner"
)

// Config is the top.
type Config struct {
	Concurrent int            ` + "`toml:\"concurrent\"`" + `
	Runners    []*RunnerConfig ` + "`toml:\"runners\"`" + `
	ModTime    time.Time      ` + "`toml:\"-\"`" + `
	loaded     bool
	Timeout    *time.Duration ` + "`toml:\"timeout,omitempty\"`" + `
}

type RunnerConfig struct {
	Name string ` + "`toml:\"name\"`" + `
	RunnerSettings
	Labels Labels ` + "`toml:\"labels\"`" + `
}

type (
	RunnerSettings struct {
		creds.Credentials
		Executor   string              ` + "`toml:\"executor\"`" + `
		PullPolicy StringOrArray       ` + "`toml:\"pull_policy\"`" + `
		Policies   []PullPolicy        ` + "`toml:\"allowed_pull_policies\"`" + `
		Cache      *cc.Config          ` + "`toml:\"cache\"`" + `
		Plugin     map[string]any      ` + "`toml:\"plugin_config\"`" + `
		Devices    map[string][]string ` + "`toml:\"devices\"`" + `
		Monitoring *runner.Monitoring  ` + "`toml:\"monitoring\"`" + `
		Alias      Aliased             ` + "`toml:\"alias\"`" + `
	}
	Labels map[string]string
)

type Aliased = Inner

type Inner struct{ Value int32 }

type PullPolicy string

type StringOrArray []string

func (p *StringOrArray) UnmarshalTOML(data any) error { return nil }

func (c Config) Unrelated() {}
`,
	"common/unused.go": `package common

type Unused struct{ X int }
`,
	"common/config_windows.go": `package common

type Config struct{}
`,
	"common/config_test.go": `package common

type Config struct{}
`,
	"helpers/creds/creds.go": `package creds

type Credentials struct {
	Host string ` + "`toml:\"host,omitempty\"`" + `
}
`,
	"cache/cacheconfig/cacheconfig.go": `package cacheconfig

type Config struct {
	Type string
	S3   *S3 ` + "`toml:\"s3,omitempty\"`" + `
}

type S3 struct {
	BucketName string
}
`,
	"common/config/runner/monitoring.go": `package runner

import "example.com/runner/common/config/runner/monitoring"

type Monitoring struct {
	Durations monitoring.Durations ` + "`toml:\"job_queuing_durations\"`" + `
}
`,
	"common/config/runner/monitoring/monitoring.go": `package monitoring

type Durations []*Duration

type Duration struct {
	Periods []string ` + "`toml:\"periods\"`" + `
}
`,
}

var sampleWant = []string{
	"concurrent\tint",
	"runners\t[]*struct\tcommon.RunnerConfig",
	"runners.name\tstring",
	"runners.host\tstring",
	"runners.executor\tstring",
	"runners.pull_policy\tStringOrArray",
	"runners.allowed_pull_policies\t[]string",
	"runners.cache\t*struct\tcacheconfig.Config",
	"runners.cache.Type\tstring",
	"runners.cache.s3\t*struct\tcacheconfig.S3",
	"runners.cache.s3.BucketName\tstring",
	"runners.plugin_config\tmap[string]any",
	"runners.devices\tmap[string][]string",
	"runners.monitoring\t*struct\trunner.Monitoring",
	"runners.monitoring.job_queuing_durations\t[]*struct\tmonitoring.Duration",
	"runners.monitoring.job_queuing_durations.periods\t[]string",
	"runners.alias\tstruct\tcommon.Inner",
	"runners.alias.Value\tint32",
	"runners.labels\tmap[string]string",
	"timeout\t*time.Duration",
}

func TestGenerate(t *testing.T) {
	root := tree(t, sample)
	res, err := Generate(root, mod)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(res); !slices.Equal(got, sampleWant) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(sampleWant, "\n"))
	}
	wantFiles := []string{
		"common/config.go",
		"helpers/creds/creds.go",
		"cache/cacheconfig/cacheconfig.go",
		"common/config/runner/monitoring.go",
		"common/config/runner/monitoring/monitoring.go",
	}
	if got := res.Files(); !slices.Equal(got, wantFiles) {
		t.Errorf("Files() = %q, want %q", got, wantFiles)
	}
	if got, want := string(res.Format("two\nlines")), "# two\n# lines\nconcurrent\tint\n"; !strings.HasPrefix(got, want) {
		t.Errorf("Format: %.60q, want prefix %q", got, want)
	}
}

func TestTrim(t *testing.T) {
	res, err := Generate(tree(t, sample), mod)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := res.Trim(out, "trimmed for a test"); err != nil {
		t.Fatal(err)
	}
	again, err := Generate(out, mod)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(again); !slices.Equal(got, sampleWant) {
		t.Errorf("trimmed tree gives:\n%s", strings.Join(got, "\n"))
	}
	b, err := os.ReadFile(filepath.Join(out, "common", "config.go"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"// trimmed for a test\n\npackage common\n", "// Config is the top.\ntype Config struct {", "func (p *StringOrArray) UnmarshalTOML(data any) error { return nil }", "type (\n\tRunnerSettings struct {"} {
		if !strings.Contains(s, want) {
			t.Errorf("trimmed config.go lacks %q:\n%s", want, s)
		}
	}
	for _, unwanted := range []string{"Unused", "Unrelated"} {
		if strings.Contains(s, unwanted) {
			t.Errorf("trimmed config.go keeps %s", unwanted)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "common", "unused.go")); !os.IsNotExist(err) {
		t.Errorf("unused.go written: %v", err)
	}
}

func TestGenerateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"external type", `package common
import "k8s.io/apimachinery/pkg/util/intstr"
type Config struct { Port intstr.IntOrString ` + "`toml:\"port\"`" + ` }`, "k8s.io/apimachinery/pkg/util/intstr.IntOrString is from outside"},
		{"recursion", `package common
type Config struct { Next *Config ` + "`toml:\"next\"`" + ` }`, "contains itself"},
		{"duplicate key", `package common
type Config struct {
	A string ` + "`toml:\"a\"`" + `
	B string ` + "`toml:\"A\"`" + `
}`, "key A appears twice"},
		{"array", `package common
type Config struct { A [2]string ` + "`toml:\"a\"`" + ` }`, "arrays are not supported"},
		{"anonymous struct", `package common
type Config struct { A struct{ B int } ` + "`toml:\"a\"`" + ` }`, "anonymous structs"},
		{"undefined", `package common
type Config struct { A Missing ` + "`toml:\"a\"`" + ` }`, "undefined type Missing"},
		{"no Config", `package common
type Other struct{}`, "no type Config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(tree(t, map[string]string{"common/config.go": tc.src}), mod)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestExternalKnown(t *testing.T) {
	src := `package common
import api "k8s.io/api/core/v1"
type Config struct { Caps []api.Capability ` + "`toml:\"add\"`" + ` }`
	res, err := Generate(tree(t, map[string]string{"common/config.go": src}), mod)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(res); !slices.Equal(got, []string{"add\t[]string"}) {
		t.Errorf("lines = %q", got)
	}
}
