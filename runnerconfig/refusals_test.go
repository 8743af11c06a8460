package runnerconfig

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// serviceRunFailedLine is the line the runner prints for a start-up refusal, spelt out
// independently of RunnerLogLine: "FATAL: Service run failed" is 25 columns,
// padded to 50, then one space, then " error=".
func serviceRunFailedLine(msg string) string {
	return "FATAL: Service run failed" + strings.Repeat(" ", 25) + " " + " error=" + msg
}

func TestRefusals(t *testing.T) {
	const (
		keyRx   = `"^[a-zA-Z0-9_][a-zA-Z0-9._-]{2,64}$"`
		valueRx = `"^[a-zA-Z0-9._-]{1,256}$"`
	)
	var computedGood strings.Builder
	computedGood.WriteString("[labels]\n")
	for i := range 20 {
		fmt.Fprintf(&computedGood, "g%02d = \"v\"\n", i)
	}
	computedGood.WriteString("[[runners]]\nname = \"r\"\n[runners.labels]\n")
	for i := range 12 {
		fmt.Fprintf(&computedGood, "r%02d = \"v\"\n", i)
	}
	computedGood.WriteString("g00 = \"own\"\n") // overrides a global one: still 32

	for _, tc := range []struct {
		name string // testdata/refusals/<name>.toml triggers the refusals
		good string // a config that does not
		want []Refusal
		line []int // LocatePath(data, want[i].Path)
	}{
		{
			name: "machine_periods",
			good: "[[runners]]\nname = \"dm\"\n[runners.machine]\n[[runners.machine.autoscaling]]\nPeriods = [\"* * * * *\"]\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.machine.autoscaling.Periods"), Path: "runners[0].machine.autoscaling[1].Periods",
				Message: "loading configuration for dm runner: compiling docker machine autoscaling periods: " +
					"invalid time periods [* * * *], caused by: missing field(s)",
				Fatal: true, Source: "common/config.go, v19.3.0",
			}},
			line: []int{17},
		},
		{
			name: "machine_periods_syntax",
			good: "[[runners]]\nname = \"dm\"\n[runners.machine]\n[[runners.machine.autoscaling]]\nperiods = [\"* * 23 * * * *\"]\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.machine.autoscaling.Periods"), Path: "runners[0].machine.autoscaling[0].Periods",
				Message: "loading configuration for dm runner: compiling docker machine autoscaling periods: " +
					"invalid time periods [* * 25 * * * *], caused by: syntax error in hour field: '25'",
				Fatal: true, Source: "common/config.go, v19.3.0",
			}},
			line: []int{8},
		},
		{
			name: "machine_timezone",
			good: "[[runners]]\nname = \"dm\"\n[runners.machine]\n[[runners.machine.autoscaling]]\nPeriods = [\"* * 9-17 * * mon-fri *\"]\nTimezone = \"UTC\"\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.machine.autoscaling.Timezone"), Path: "runners[0].machine.autoscaling[0].Timezone",
				Message: "loading configuration for dm runner: compiling docker machine autoscaling periods: " +
					"invalid time periods [* * 9-17 * * mon-fri *], caused by: unknown time zone Mars/Olympus_Mons",
				Fatal: true, Source: "common/config.go, v19.3.0",
			}},
			line: []int{9},
		},
		{
			name: "monitoring_periods",
			good: "[[runners]]\nname = \"k8s\"\n[[runners.monitoring.job_queuing_durations]]\nperiods = [\"* * * * 1-5\"]\nthreshold = \"30s\"\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.monitoring.job_queuing_durations.periods"), Path: "runners[0].monitoring.job_queuing_durations[1].periods",
				Message: "loading configuration for k8s runner: compiling monitoring sections: compiling job_queuing_durations: " +
					"entry 1: periods: missing field(s)",
				Fatal: true, Source: "common/config/runner/monitoring/job_queuing_durations.go, v19.3.0",
			}},
			line: []int{8},
		},
		{
			name: "monitoring_timezone",
			good: "[[runners]]\nname = \"k8s\"\n[[runners.monitoring.job_queuing_durations]]\nperiods = [\"* * * * * *\"]\ntimezone = \"Local\"\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.monitoring.job_queuing_durations.timezone"), Path: "runners[0].monitoring.job_queuing_durations[0].timezone",
				Message: "loading configuration for k8s runner: compiling monitoring sections: compiling job_queuing_durations: " +
					"entry 0: periods: unknown time zone Europe/Atlantis",
				Fatal: true, Source: "common/config/runner/monitoring/job_queuing_durations.go, v19.3.0",
			}},
			line: []int{6},
		},
		{
			name: "monitoring_regexp",
			good: "[[runners]]\nname = \"k8s\"\n[[runners.monitoring.job_queuing_durations]]\nperiods = [\"* * * * * *\"]\njobs_running_for_project = \"^(foo|bar)$\"\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.monitoring.job_queuing_durations.jobs_running_for_project"),
				Path: "runners[0].monitoring.job_queuing_durations[0].jobs_running_for_project",
				Message: "loading configuration for k8s runner: compiling monitoring sections: compiling job_queuing_durations: " +
					"entry 0: jobs_running_for_project: error parsing regexp: missing closing ): `(foo`",
				Fatal: true, Source: "common/config/runner/monitoring/job_queuing_durations.go, v19.3.0",
			}},
			line: []int{7},
		},
		{
			name: "global_label_key",
			good: "labels = { abc = \"x\", team = \"ci\" }\n",
			want: []Refusal{{
				Runner: -1, Key: key("labels.ab"), Path: "labels.ab",
				Message: "invalid config: validating global labels: invalid label key, doesn't match " + keyRx + ": ab",
				Fatal:   true, Source: "common/labels.go, v19.3.0",
			}},
			line: []int{3},
		},
		{
			name: "global_label_value",
			good: "[labels]\nowner = \"platform.ci\"\n",
			want: []Refusal{{
				Runner: -1, Key: key("labels.owner"), Path: "labels.owner",
				Message: "invalid config: validating global labels: invalid label value, doesn't match " + valueRx + ": platform/ci",
				Fatal:   true, Source: "common/labels.go, v19.3.0",
			}},
			line: []int{3},
		},
		{
			name: "runner_label_key",
			good: "[[runners]]\nname = \"second\"\n[runners.labels]\ncost_center = \"42\"\n",
			want: []Refusal{{
				Runner: 1, Key: []string{"runners", "labels", "cost center"}, Path: `runners[1].labels."cost center"`,
				Message: "invalid config: validating runner second: validating labels: invalid label key, doesn't match " + keyRx + ": cost center",
				Fatal:   true, Source: "common/labels.go, v19.3.0",
			}},
			line: []int{8},
		},
		{
			name: "runner_label_value",
			good: "[[runners]]\nname = \"r\"\nlabels = { env = \"prod\" }\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.labels.env"), Path: "runners[0].labels.env",
				Message: "invalid config: validating runner r: validating labels: invalid label value, doesn't match " + valueRx + ": ",
				Fatal:   true, Source: "common/labels.go, v19.3.0",
			}},
			line: []int{4},
		},
		{
			name: "computed_labels",
			good: computedGood.String(),
			want: []Refusal{{
				Runner: 0, Key: key("runners.labels"), Path: "runners[0].labels",
				Message: "invalid config: validating runner r: validating computed labels: exceeded maximum computed labels number of 32",
				Fatal:   true, Source: "common/labels.go, v19.3.0",
			}},
			line: []int{27},
		},
		{
			name: "machine_options_with_name",
			good: "[[runners]]\nname = \"dm\"\n[runners.machine]\nMachineOptionsWithName = [\"google-tags=runner-%s\"]\n",
			want: []Refusal{{
				Runner: 0, Key: key("runners.machine.MachineOptionsWithName"), Path: "runners[0].machine.MachineOptionsWithName",
				Message: `invalid config: validating runner dm: validating machine options with name: ` +
					`machine option with name "google-machine-name" must contain %s placeholder`,
				Fatal: true, Source: "common/config.go, v19.3.0",
			}},
			line: []int{6},
		},
		{
			name: "log_level",
			good: "log_level = \"WARNING\"\n",
			want: []Refusal{{
				Runner: -1, Key: key("log_level"), Path: "log_level",
				Message: `failed to parse log level: not a valid logrus Level: "verbose"`,
				Fatal:   true, Source: "log/configuration.go, v19.3.0",
			}},
			line: []int{1},
		},
		{
			name: "log_format",
			good: "log_format = \"json\"\n",
			want: []Refusal{{
				Runner: -1, Key: key("log_format"), Path: "log_format",
				Message: `unknown log format &{%!q(bool=false) %!q(bool=false)}, expected one of: [runner text json]`,
				Fatal:   true, Source: "log/configuration.go, v19.3.0",
			}},
			line: []int{2},
		},
		{
			name: "usage_logger_writer",
			good: "[experimental.usage_logger]\nenabled = true\nwriters = [\"logrotate\"]\n",
			want: []Refusal{{
				Runner: -1, Key: key("experimental.usage_logger.writers"), Path: "experimental.usage_logger.writers",
				Message: "Unknown usage logger writer, skipping",
				Source:  "commands/multi.go, v19.3.0",
				Log:     "ERROR: Unknown usage logger writer, skipping" + strings.Repeat(" ", 6) + "  builds=0 max_builds=8 writer=file",
			}},
			line: []int{5},
		},
		{
			name: "usage_logger_collector",
			good: "[experimental.usage_logger]\nenabled = true\nwriters = [\"snowplow_billing\"]\n[experimental.usage_logger.snowplow_billing]\ncollector_uri = \"https://collector.example\"\n",
			want: []Refusal{{
				Runner: -1, Key: key("experimental.usage_logger.writers"), Path: "experimental.usage_logger.writers",
				Message: "Snowplow collector_uri not configured, snowplow_billing writer not enabled for usage logger",
				Source:  "commands/multi.go, v19.3.0",
				Log:     "ERROR: Snowplow collector_uri not configured, snowplow_billing writer not enabled for usage logger  builds=0 max_builds=1",
			}},
			line: []int{3},
		},
		{
			name: "listen_address",
			good: "listen_address = \"localhost\"\n", // a missing port is fine: :9252 is added
			want: []Refusal{{
				Runner: -1, Key: key("listen_address"), Path: "listen_address",
				Message: "invalid listen address: address 0.0.0.0:9252:9252: too many colons in address",
				Source:  "commands/multi.go, v19.3.0",
				Log:     "ERROR: invalid listen address: address 0.0.0.0:9252:9252: too many colons in address  builds=0 max_builds=2",
			}},
			line: []int{2},
		},
		{
			name: "session_no_host",
			good: "[session_server]\nlisten_address = \"[::]:8093\"\n",
			want: []Refusal{{
				Runner: -1, Key: key("session_server.listen_address"), Path: "session_server.listen_address",
				Message: "no valid address provided",
				Fatal:   true, Source: "session/server.go, v19.3.0",
				Log: "FATAL: Failed to create session server" + strings.Repeat(" ", 12) +
					"  builds=0 error=no valid address provided max_builds=2",
			}},
			line: []int{5},
		},
		{
			name: "session_scheme",
			good: "[session_server]\nlisten_address = \"0.0.0.0:8093\"\nadvertise_address = \"runner.example.com:8093\"\n",
			want: []Refusal{
				{
					Runner: -1, Key: key("session_server.advertise_address"), Path: "session_server.advertise_address",
					Message: "address https://runner.example.com:8093: too many colons in address",
					Source:  "session/server.go, v19.3.0",
					Log: "WARNING: Failed to parse session address" + strings.Repeat(" ", 10) +
						"  address=https://runner.example.com:8093 builds=0 " +
						"error=address https://runner.example.com:8093: too many colons in address max_builds=1",
				},
				{
					Runner: -1, Key: key("session_server.advertise_address"), Path: "session_server.advertise_address",
					Message: "url not valid, scheme defined",
					Fatal:   true, Source: "session/server.go, v19.3.0",
					Log: "FATAL: Failed to create session server" + strings.Repeat(" ", 12) +
						"  builds=0 error=url not valid, scheme defined max_builds=1",
				},
			},
			line: []int{4, 4},
		},
		{
			name: "session_url",
			good: "[session_server]\nlisten_address = \"0.0.0.0:8093\"\nadvertise_address = \"runner.example.com:8093\"\n",
			want: []Refusal{{
				Runner: -1, Key: key("session_server.advertise_address"), Path: "session_server.advertise_address",
				Message: `parse "https://runner example.com:8093": invalid character " " in host name`,
				Fatal:   true, Source: "session/server.go, v19.3.0",
				Log: "FATAL: Failed to create session server" + strings.Repeat(" ", 12) +
					`  builds=0 error=parse "https://runner example.com:8093": invalid character " " in host name max_builds=1`,
			}},
			line: []int{4},
		},
		{
			name: "session_address_warning",
			good: "[session_server]\nlisten_address = \"0.0.0.0:8093\"\nadvertise_address = \"runner.example.com:8093\"\n",
			want: []Refusal{{
				Runner: -1, Key: key("session_server.advertise_address"), Path: "session_server.advertise_address",
				Message: "address runner.example.com: missing port in address",
				Source:  "session/server.go, v19.3.0",
				Log: "WARNING: Failed to parse session address" + strings.Repeat(" ", 10) +
					"  address=runner.example.com builds=0 error=address runner.example.com: missing port in address max_builds=1",
			}},
			line: []int{5},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := readFile(t, "refusals/"+tc.name+".toml")
			cfg, _, err := Decode(bad)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if tc.want[i].Fatal && tc.want[i].Log == "" {
					tc.want[i].Log = serviceRunFailedLine(tc.want[i].Message)
				}
			}
			got := Refusals(cfg)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Refusals:\n got %#v\nwant %#v", got, tc.want)
			}
			for i, r := range got {
				if i < len(tc.line) {
					if l := LocatePath(bad, r.Path); l != tc.line[i] {
						t.Errorf("LocatePath(%q) = %d, want %d", r.Path, l, tc.line[i])
					}
				}
			}

			cfg, _, err = Decode([]byte(tc.good))
			if err != nil {
				t.Fatal(err)
			}
			if got := Refusals(cfg); len(got) != 0 {
				t.Errorf("good config refused: %#v", got)
			}
		})
	}
}

func TestRefusalsOrderAndIndexes(t *testing.T) {
	data := []byte(`log_level = "loud"
labels = { x = "1" }

[[runners]]
  name = "a"
  labels = { "bad key" = "v", "also bad" = "w", fine = "a b" }
  [runners.machine]
    MachineOptionsWithName = ["one", "two"]
    [[runners.machine.autoscaling]]
      Periods = ["nope"]
[[runners]]
  name = ""
  [[runners.monitoring.job_queuing_durations]]
    periods = ["* * * * *"]
    jobs_running_for_project = "["
`)
	cfg, _, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range Refusals(cfg) {
		got = append(got, fmt.Sprintf("%d %s: %s", r.Runner, r.Path, r.Message))
	}
	want := []string{
		"0 runners[0].machine.autoscaling[0].Periods: loading configuration for a runner: compiling docker machine autoscaling periods: invalid time periods [nope], caused by: missing field(s)",
		// An empty name leaves two spaces.
		"1 runners[1].monitoring.job_queuing_durations[0].jobs_running_for_project: loading configuration for  runner: compiling monitoring sections: compiling job_queuing_durations: entry 0: jobs_running_for_project: error parsing regexp: missing closing ]: `[`",
		`-1 labels.x: invalid config: validating global labels: invalid label key, doesn't match "^[a-zA-Z0-9_][a-zA-Z0-9._-]{2,64}$": x`,
		`0 runners[0].labels."also bad": invalid config: validating runner a: validating labels: invalid label key, doesn't match "^[a-zA-Z0-9_][a-zA-Z0-9._-]{2,64}$": also bad`,
		`0 runners[0].labels."bad key": invalid config: validating runner a: validating labels: invalid label key, doesn't match "^[a-zA-Z0-9_][a-zA-Z0-9._-]{2,64}$": bad key`,
		`0 runners[0].labels.fine: invalid config: validating runner a: validating labels: invalid label value, doesn't match "^[a-zA-Z0-9._-]{1,256}$": a b`,
		// Only the first option without %s: the runner returns there.
		`0 runners[0].machine.MachineOptionsWithName: invalid config: validating runner a: validating machine options with name: machine option with name "one" must contain %s placeholder`,
		`-1 log_level: failed to parse log level: not a valid logrus Level: "loud"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Refusals:\n got %q\nwant %q", got, want)
	}
}

func TestRefusalsQuotedFormats(t *testing.T) {
	// The runner's unknown-log-format error prints its current formatter, a
	// *log.RunnerTextFormatter{DisableColors, DisableSorting bool}, with %q.
	type RunnerTextFormatter struct{ DisableColors, DisableSorting bool }
	var formatter any = new(RunnerTextFormatter)
	want := fmt.Sprintf(msgUnknownLogFormat, formatter, LogFormatNames)
	cfg, _, _ := Decode([]byte("log_format = \"yaml\"\n"))
	if got := Refusals(cfg); len(got) != 1 || got[0].Message != want {
		t.Errorf("Refusals = %#v, want message %q", got, want)
	}
}

func TestRunnerLogLine(t *testing.T) {
	for _, tc := range []struct {
		level, msg string
		fields     []string
		want       string
	}{
		{"fatal", "Service run failed", []string{"error", "boom"}, "FATAL: Service run failed" + strings.Repeat(" ", 25) + "  error=boom"},
		{"info", "Configuration loaded", []string{"max_builds", "1", "builds", "0"}, "Configuration loaded" + strings.Repeat(" ", 30) + "  builds=0 max_builds=1"},
		{"warning", "x", nil, "WARNING: x" + strings.Repeat(" ", 40) + " "},
		{"error", strings.Repeat("m", 60), []string{"k", "v"}, "ERROR: " + strings.Repeat("m", 60) + "  k=v"},
		// fmt pads by runes.
		{"error", "ü", nil, "ERROR: ü" + strings.Repeat(" ", 42) + " "},
	} {
		if got := RunnerLogLine(tc.level, tc.msg, tc.fields...); got != tc.want {
			t.Errorf("RunnerLogLine(%q, %q, %q) =\n%q, want\n%q", tc.level, tc.msg, tc.fields, got, tc.want)
		}
	}
}

func TestRefusalsNil(t *testing.T) {
	if Refusals(nil) != nil || Refusals(new(Config)) != nil {
		t.Error("an empty config is refused")
	}
}
