package runnerconfig

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/gorhill/cronexpr"
)

// Refusal is one reason the runner refuses a config that decoded.
//
// Everything here was read from gitlab-runner tag v19.3.0 (commit
// 9cbf0074d). v19.2.0 to v19.2.2 differ in two places: the per-runner
// prefix is misspelt "loading coniguration for %s runner: " there, and
// session.NewServer listens on [session_server] listen_address before it
// checks the advertise address, so a listen error comes first.
type Refusal struct {
	// Runner is the index into Config.Runners, -1 for a global setting.
	Runner int
	// Key is the key to look for the evidence line, without indexes and with
	// the runner's spelling (machine keys are CamelCase: Periods), e.g.
	// {"runners", "machine", "autoscaling", "Periods"}. Locate matches it
	// exactly; LocatePath(data, Path) also finds other spellings.
	Key toml.Key
	// Path is Key with indexes, as Occurrence.Path writes it:
	// runners[1].machine.autoscaling[0].Periods.
	Path string
	// Message is exactly what the runner prints: the error's text where the
	// runner logs an error (after "error=" in its log line), else the log
	// message itself.
	Message string
	// Fatal is true when the process exits (status 1) at start-up; false
	// when the runner logs the problem and goes on.
	Fatal bool
	// Source names the file and tag the text comes from.
	Source string
	// Log is the whole line the runner prints, in its default ("runner") log
	// format without colour codes; see RunnerLogLine.
	Log string
}

// Where each text comes from.
const (
	srcConfig     = "common/config.go, v19.3.0"
	srcLabels     = "common/labels.go, v19.3.0"
	srcMonitoring = "common/config/runner/monitoring/job_queuing_durations.go, v19.3.0"
	srcLog        = "log/configuration.go, v19.3.0"
	srcMulti      = "commands/multi.go, v19.3.0"
	srcSession    = "session/server.go, v19.3.0"
)

// The runner's texts, quoted.
const (
	// commands/multi.go, v19.3.0: logrus.WithError(err).Fatal("Service run failed")
	msgServiceRunFailed = "Service run failed"

	// common/config.go, v19.3.0: fmt.Errorf("loading configuration for %s runner: %w", r.Name, err)
	// (v19.2.0 to v19.2.2 spell it "loading coniguration for %s runner: %w")
	msgLoadingRunner = "loading configuration for %s runner: %w"
	// common/config.go, v19.3.0: fmt.Errorf("compiling docker machine autoscaling periods: %w", err)
	msgCompilingMachinePeriods = "compiling docker machine autoscaling periods: %w"
	// common/config.go, v19.3.0: fmt.Sprintf("invalid time periods %v, caused by: %v", e.periods, e.cause)
	msgInvalidTimePeriods = "invalid time periods %v, caused by: %v"
	// common/config.go, v19.3.0: fmt.Errorf("compiling monitoring sections: %w", err)
	msgCompilingMonitoring = "compiling monitoring sections: %w"
	// common/config/runner/monitoring.go, v19.3.0: fmt.Errorf("compiling job_queuing_durations: %w", err)
	msgCompilingJobQueuing = "compiling job_queuing_durations: %w"
	// common/config/runner/monitoring/job_queuing_durations.go, v19.3.0: fmt.Errorf("entry %d: %w", id, err)
	msgEntry = "entry %d: %w"
	// common/config/runner/monitoring/job_queuing_durations.go, v19.3.0: fmt.Errorf("periods: %w", err)
	msgPeriods = "periods: %w"
	// common/config/runner/monitoring/job_queuing_durations.go, v19.3.0: fmt.Errorf("jobs_running_for_project: %w", err)
	msgJobsRunningForProject = "jobs_running_for_project: %w"

	// common/config.go, v19.3.0: fmt.Errorf("invalid config: %w", err)
	msgInvalidConfig = "invalid config: %w"
	// common/config.go, v19.3.0: fmt.Errorf("validating %s: %w", vn, err) with vn "global labels"
	msgValidatingGlobal = "validating global labels: %w"
	// common/config.go, v19.3.0: fmt.Errorf("validating runner %s: %w", r.Name, err)
	msgValidatingRunner = "validating runner %s: %w"
	// common/config.go, v19.3.0: fmt.Errorf("validating %s: %w", vn, err) with vn one of
	// "labels", "computed labels", "slot cgroups", "machine options with name"
	msgValidating = "validating %s: %w"
	// common/config.go, v19.3.0: fmt.Errorf("machine option with name %q must contain %%s placeholder", opt)
	msgMachineOptionWithName = "machine option with name %q must contain %%s placeholder"

	// common/labels.go, v19.3.0: `^[a-zA-Z0-9_][a-zA-Z0-9._-]{2,64}$`
	labelKeyAllowedPattern = `^[a-zA-Z0-9_][a-zA-Z0-9._-]{2,64}$`
	// common/labels.go, v19.3.0: `^[a-zA-Z0-9._-]{1,256}$`
	labelValueAllowedPattern = `^[a-zA-Z0-9._-]{1,256}$`
	// common/labels.go, v19.3.0: maxAllowedNumberOfLabels = 32
	maxAllowedNumberOfLabels = 32

	// log/configuration.go, v19.3.0: fmt.Errorf("failed to parse log level: %w", err)
	msgParseLogLevel = "failed to parse log level: %w"
	// sirupsen/logrus v1.9.4 logrus.go: fmt.Errorf("not a valid logrus Level: %q", lvl)
	msgNotAValidLevel = "not a valid logrus Level: %q"
	// log/configuration.go, v19.3.0:
	// fmt.Errorf("unknown log format %q, expected one of: %v", l.format, formatNames())
	msgUnknownLogFormat = "unknown log format %q, expected one of: %v"

	// commands/multi.go, v19.3.0: mr.log().Errorf("invalid listen address: %s", err.Error())
	msgInvalidListenAddress = "invalid listen address: %s"
	// commands/multi.go, v19.3.0: mr.log().WithError(err).Fatal("Failed to create session server")
	msgCreateSessionServer = "Failed to create session server"
	// session/server.go, v19.3.0: ...WithError(err).Warn("Failed to parse session address")
	msgParseSessionAddress = "Failed to parse session address"
	// session/server.go, v19.3.0: errors.New("no valid address provided")
	msgNoValidAddress = "no valid address provided"
	// session/server.go, v19.3.0: ErrInvalidURL = errors.New("url not valid, scheme defined")
	msgInvalidURL = "url not valid, scheme defined"

	// commands/multi.go, v19.3.0: ...WithField("writer", name).Error("Unknown usage logger writer, skipping")
	msgUnknownUsageWriter = "Unknown usage logger writer, skipping"
	// commands/multi.go, v19.3.0:
	// mr.log().Error("Snowplow collector_uri not configured, snowplow_billing writer not enabled for usage logger")
	msgNoCollectorURI = "Snowplow collector_uri not configured, snowplow_billing writer not enabled for usage logger"
)

var (
	// Compiled on first use: {1,256} compiles to 256 copies of its class,
	// a third of a megabyte and a millisecond at every start, for the few
	// configs with [runners.labels].
	labelKeyAllowedRx   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(labelKeyAllowedPattern) })
	labelValueAllowedRx = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(labelValueAllowedPattern) })

	// common/labels.go, v19.3.0:
	// fmt.Errorf("invalid label key, doesn't match %q", labelKeyAllowedPattern)
	errInvalidLabelKey = fmt.Errorf("invalid label key, doesn't match %q", labelKeyAllowedPattern)
	// common/labels.go, v19.3.0:
	// fmt.Errorf("invalid label value, doesn't match %q", labelValueAllowedPattern)
	errInvalidLabelValue = fmt.Errorf("invalid label value, doesn't match %q", labelValueAllowedPattern)
	// common/labels.go, v19.3.0:
	// fmt.Errorf("exceeded maximum computed labels number of %d", maxAllowedNumberOfLabels)
	errLabelsCountExceeded = fmt.Errorf("exceeded maximum computed labels number of %d", maxAllowedNumberOfLabels)
)

// LogFormatNames is the list the runner prints in its "unknown log format"
// error. The runner builds it by ranging over a Go map (log/configuration.go,
// v19.3.0, formatNames), so its order is not fixed: built with Go 1.26 it is
// [runner text json] six times in eight, else [text json runner] or
// [json runner text]. Refusals uses the first.
var LogFormatNames = []string{"runner", "text", "json"}

// startupFormatter is what %q prints for the log formatter the runner has
// when it reads config.toml at start-up, log.NewConfig's
// new(RunnerTextFormatter), a pointer to a struct of two bools
// (DisableColors, DisableSorting): fmt prints a pointer to a struct as &{...}
// with the verb applied to each field, and %q does not apply to a bool, so
// there are no quotes around it. The runner's "unknown log format" error
// prints that formatter, not the value of log_format.
const startupFormatter = "&{%!q(bool=false) %!q(bool=false)}"

// Refusals returns every reason gitlab-runner v19.3.0's `gitlab-runner run`
// refuses cfg although it decoded, in the order the runner checks them.
//
// # Fatal refusals, at start-up and at reload
//
// These run in RunCommand.Start (commands/multi.go), through reloadConfig,
// before the process serves anything: config.LoadConfig (common/config.go)
// after decoding compiles, per [[runners]] in file order, the
// [[runners.machine.autoscaling]] Periods and Timezone of every runner that
// has a [runners.machine] table, whatever its executor, and the
// [[runners.monitoring.job_queuing_durations]] periods, timezone and
// jobs_running_for_project; then Validate checks the global labels, and per
// runner its labels, its computed labels (global and own) and its
// MachineOptionsWithName; then updateLoggingConfiguration parses log_level
// and then log_format, each unless given on the command line (--log-level,
// -l, --debug, --log-format) or by LOG_LEVEL, RUNNER_DEBUG or LOG_FORMAT,
// which urfave/cli v1.22.17's IsSet counts as set.
//
// The first failure ends Start with that error, and Execute prints it and
// exits with status 1:
//
//	FATAL: Service run failed                           error=<Message>
//
// (Refusal.Log; see RunnerLogLine for the exact spacing). The runner stops
// at the first failure, so only the first Fatal refusal of the list is
// printed, with one exception to the list's order: where the runner ranges
// over a Go map its order is random, so among the labels of one table, and
// among the four validations of one runner (labels, computed labels, slot
// cgroups, machine options with name), which failure is printed can change
// from one start to the next. The list gives labels sorted by key, and the
// validations in the order just named. The label checks look at a key
// before its value, so an entry whose key is invalid is listed for its key
// only.
//
// When config.toml changes while the runner is running (it checks the file's
// modification time every 3 s) or on SIGHUP, the same errors are not fatal:
// the runner logs "ERROR: Failed to load config <Message>" (logrus Errorln:
// the message and the error joined by one space), twice when it was the
// file's change that triggered the reload (checkConfig logs it and returns
// it to updateConfig, which logs it again), and keeps the previous config
// for the LoadConfig and Validate failures. A log_level or log_format
// failure happens after the new config has replaced the old one: the new
// config is in force, but the rest of the reload (usage logger, sentry,
// connection_max_age) is skipped.
//
// Timezone is compiled with time.LoadLocation, as in the runner, which
// embeds no time zone database: whether a zone exists depends on the
// machine's zoneinfo (ZONEINFO, /usr/share/zoneinfo, ...). Refusals asks
// the machine it runs on, which may not be the runner's.
//
// # Logged refusals
//
// The rest are not fatal (Fatal false): the runner logs them and goes on
// without the feature. In the order they happen: with
// [experimental.usage_logger] enabled, an unknown name in writers, and
// snowplow_billing without collector_uri (at every load); then, in
// RunCommand.run, once after start-up, a listen_address that
// net.SplitHostPort rejects for another reason than a missing port (the
// metrics server is then not started; --listen-address or LISTEN_ADDRESS
// replaces listen_address), and for [session_server], an address that does
// not parse (a warning; the address is skipped). A [session_server] with no
// usable host, an advertise address with a scheme or one that does not
// make a URL after "https://" is fatal, at start-up only (the session server
// is not re-created on reload), and after Start has returned:
//
//	FATAL: Failed to create session server              builds=0 error=<Message> max_builds=<concurrent>
//
// These lines carry the builds and max_builds fields of the run command's
// logger. builds is 0 at start-up; max_builds is concurrent, taken here as
// 1 (the runner's default) when cfg.Concurrent is 0, because Decode cannot
// tell an absent concurrent from concurrent = 0.
//
// Refusals does not cover what depends on the machine (a listen address
// already in use, an unreadable .runner_system_id) nor what executors check
// when a runner first uses them.
func Refusals(cfg *Config) []Refusal {
	if cfg == nil {
		return nil
	}
	var out []Refusal

	// config.LoadConfig: per runner, r.loadConfig.
	for i, r := range cfg.Runners {
		if r == nil {
			continue
		}
		loading := func(err error) string {
			return fmt.Errorf(msgLoadingRunner, r.Name, err).Error()
		}
		if r.Machine != nil {
			for j, a := range r.Machine.AutoscalingConfigs {
				if a == nil {
					continue
				}
				field, cause := compileTimePeriods(a.Periods, a.Timezone)
				if cause == nil {
					continue
				}
				name := "Periods"
				if field == "timezone" {
					name = "Timezone"
				}
				err := fmt.Errorf(msgCompilingMachinePeriods, fmt.Errorf(msgInvalidTimePeriods, a.Periods, cause))
				out = append(out, fatalRefusal(i, []comp{{"runners", i, false}, {"machine", -1, false}, {"autoscaling", j, false}, {name, -1, false}},
					loading(err), srcConfig))
			}
		}
		if r.Monitoring != nil && r.Monitoring.JobQueuingDurations != nil {
			for j, q := range r.Monitoring.JobQueuingDurations {
				if q == nil {
					continue
				}
				var err error
				name := ""
				if field, cause := compileTimePeriods(q.Periods, q.Timezone); cause != nil {
					err, name = fmt.Errorf(msgPeriods, cause), field
				} else if _, cause := regexp.Compile(q.JobsRunningForProject); cause != nil {
					err, name = fmt.Errorf(msgJobsRunningForProject, cause), "jobs_running_for_project"
				}
				if err == nil {
					continue
				}
				if name == "" {
					name = "periods"
				}
				err = fmt.Errorf(msgCompilingMonitoring, fmt.Errorf(msgCompilingJobQueuing, fmt.Errorf(msgEntry, j, err)))
				out = append(out, fatalRefusal(i, []comp{{"runners", i, false}, {"monitoring", -1, false}, {"job_queuing_durations", j, false}, {name, -1, false}},
					loading(err), srcMonitoring))
			}
		}
	}

	// config.Validate: global labels, then each runner.
	for _, lr := range labelRefusals(cfg.Labels, []comp{{"labels", -1, false}}) {
		out = append(out, fatalRefusal(-1, lr.path, fmt.Errorf(msgInvalidConfig, fmt.Errorf(msgValidatingGlobal, lr.err)).Error(), srcLabels))
	}
	for i, r := range cfg.Runners {
		if r == nil {
			continue
		}
		invalid := func(what string, err error) string {
			return fmt.Errorf(msgInvalidConfig, fmt.Errorf(msgValidatingRunner, r.Name, fmt.Errorf(msgValidating, what, err))).Error()
		}
		for _, lr := range labelRefusals(r.Labels, []comp{{"runners", i, false}, {"labels", -1, false}}) {
			out = append(out, fatalRefusal(i, lr.path, invalid("labels", lr.err), srcLabels))
		}
		computed := map[string]bool{}
		for k := range cfg.Labels {
			computed[k] = true
		}
		for k := range r.Labels {
			computed[k] = true
		}
		if len(computed) > maxAllowedNumberOfLabels {
			path := []comp{{"runners", i, false}, {"labels", -1, false}}
			if len(r.Labels) == 0 {
				path = []comp{{"labels", -1, false}}
			}
			out = append(out, fatalRefusal(i, path, invalid("computed labels", errLabelsCountExceeded), srcLabels))
		}
		if r.Machine != nil {
			for _, opt := range r.Machine.MachineOptionsWithName {
				if !strings.Contains(opt, "%s") {
					out = append(out, fatalRefusal(i, []comp{{"runners", i, false}, {"machine", -1, false}, {"MachineOptionsWithName", -1, false}},
						invalid("machine options with name", fmt.Errorf(msgMachineOptionWithName, opt)), srcConfig))
					break // the runner returns at the first
				}
			}
		}
	}

	// RunCommand.updateLoggingConfiguration.
	if cfg.LogLevel != nil && !validLogLevel(*cfg.LogLevel) {
		err := fmt.Errorf(msgParseLogLevel, fmt.Errorf(msgNotAValidLevel, *cfg.LogLevel))
		out = append(out, fatalRefusal(-1, []comp{{"log_level", -1, false}}, err.Error(), srcLog))
	}
	if cfg.LogFormat != nil && !slices.Contains(LogFormatNames, *cfg.LogFormat) {
		// msgUnknownLogFormat with %q of the start-up formatter.
		msg := fmt.Sprintf("unknown log format %s, expected one of: %v", startupFormatter, LogFormatNames)
		out = append(out, fatalRefusal(-1, []comp{{"log_format", -1, false}}, msg, srcLog))
	}

	maxBuilds := cfg.Concurrent
	if maxBuilds == 0 {
		maxBuilds = 1
	}
	runFields := func(extra ...string) []string {
		return append([]string{"builds", "0", "max_builds", fmt.Sprint(maxBuilds)}, extra...)
	}

	// RunCommand.reloadUsageLogger.
	if e := cfg.Experimental; e != nil && e.UsageLogger.Enabled {
		writers := e.UsageLogger.Writers
		if len(writers) == 0 {
			writers = []string{"logrotate"}
		}
		writersPath := []comp{{"experimental", -1, false}, {"usage_logger", -1, false}, {"writers", -1, false}}
		if len(e.UsageLogger.Writers) == 0 {
			writersPath = writersPath[:2]
		}
		for _, name := range writers {
			switch name {
			case "logrotate":
			case "snowplow_billing":
				if e.UsageLogger.Snowplow.CollectorURI == "" {
					out = append(out, loggedRefusal(-1, writersPath, "error", msgNoCollectorURI, msgNoCollectorURI, srcMulti, runFields()...))
				}
			default:
				out = append(out, loggedRefusal(-1, writersPath, "error", msgUnknownUsageWriter, msgUnknownUsageWriter, srcMulti,
					runFields("writer", name)...))
			}
		}
	}

	// RunCommand.run: setupMetricsAndDebugServer.
	if cfg.ListenAddress != "" {
		if _, _, err := net.SplitHostPort(cfg.ListenAddress); err != nil && !strings.Contains(err.Error(), "missing port in address") {
			msg := fmt.Sprintf(msgInvalidListenAddress, err.Error())
			out = append(out, loggedRefusal(-1, []comp{{"listen_address", -1, false}}, "error", msg, msg, srcMulti, runFields()...))
		}
	}

	// RunCommand.run: setupSessionServer, session.NewServer.
	if ss := cfg.SessionServer; ss.ListenAddress != "" {
		var host string
		for _, a := range []struct {
			addr string
			key  string
		}{{ss.AdvertiseAddress, "advertise_address"}, {ss.ListenAddress, "listen_address"}} {
			if a.addr == "" {
				continue
			}
			h, _, err := net.SplitHostPort(a.addr)
			if err != nil {
				out = append(out, loggedRefusal(-1, []comp{{"session_server", -1, false}, {a.key, -1, false}}, "warning",
					msgParseSessionAddress, err.Error(), srcSession, runFields("address", a.addr, "error", err.Error())...))
			}
			if h != "" {
				host = h
				break
			}
		}
		var err error
		key := "listen_address"
		if ss.AdvertiseAddress != "" {
			key = "advertise_address"
		}
		if host == "" {
			err = errors.New(msgNoValidAddress)
		} else {
			advertise := ss.AdvertiseAddress
			if advertise == "" {
				advertise = ss.ListenAddress
			}
			if strings.HasPrefix(advertise, "https://") || strings.HasPrefix(advertise, "http://") {
				err = errors.New(msgInvalidURL)
			} else {
				_, err = url.ParseRequestURI("https://" + advertise)
			}
		}
		if err != nil {
			r := loggedRefusal(-1, []comp{{"session_server", -1, false}, {key, -1, false}}, "fatal",
				msgCreateSessionServer, err.Error(), srcSession, runFields("error", err.Error())...)
			r.Fatal = true
			out = append(out, r)
		}
	}
	return out
}

// compileTimePeriods is timeperiod.TimePeriodsWithTimer (helpers/timeperiod,
// v19.3.0): each period with cronexpr.Parse, then the time zone, "" meaning
// "Local". It says which failed: "periods" or "timezone".
func compileTimePeriods(periods []string, timezone string) (field string, err error) {
	for _, p := range periods {
		if err := parseCron(p); err != nil {
			return "periods", err
		}
	}
	// helpers/timeperiod/period.go, v19.3.0:
	// "if not set, default to system setting (the empty string would mean UTC)"
	if timezone == "" {
		timezone = "Local"
	}
	if _, err := time.LoadLocation(timezone); err != nil {
		return "timezone", err
	}
	return "", nil
}

// parseCron is cronexpr.Parse, which the runner calls as is. Should the
// library panic the runner would crash; the panic is reported as an error
// here instead of crashing doctor.
func parseCron(p string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	_, err = cronexpr.Parse(p)
	return err
}

// validLogLevel is logrus.ParseLevel (sirupsen/logrus v1.9.4) succeeding.
func validLogLevel(s string) bool {
	switch strings.ToLower(s) {
	case "panic", "fatal", "error", "warn", "warning", "info", "debug", "trace":
		return true
	}
	return false
}

type labelRefusal struct {
	path []comp
	err  error
}

// labelRefusals is Labels.validatePatterns (common/labels.go, v19.3.0) for
// every entry, in key order: the key is checked before the value.
func labelRefusals(labels map[string]string, prefix []comp) []labelRefusal {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []labelRefusal
	for _, k := range keys {
		path := appendComp(prefix, comp{name: k, idx: -1})
		switch {
		case !labelKeyAllowedRx().MatchString(k):
			out = append(out, labelRefusal{path, fmt.Errorf("%w: %s", errInvalidLabelKey, k)})
		case !labelValueAllowedRx().MatchString(labels[k]):
			out = append(out, labelRefusal{path, fmt.Errorf("%w: %s", errInvalidLabelValue, labels[k])})
		}
	}
	return out
}

func pathKey(path []comp) toml.Key {
	k := make(toml.Key, len(path))
	for i, c := range path {
		k[i] = c.name
	}
	return k
}

// fatalRefusal is a start-up failure: Start returns err and Execute logs
// logrus.WithError(err).Fatal("Service run failed").
func fatalRefusal(runner int, path []comp, msg, source string) Refusal {
	return Refusal{
		Runner:  runner,
		Key:     pathKey(path),
		Path:    formatPath(path),
		Message: msg,
		Fatal:   true,
		Source:  source,
		Log:     RunnerLogLine("fatal", msgServiceRunFailed, "error", msg),
	}
}

func loggedRefusal(runner int, path []comp, level, logMsg, msg, source string, fields ...string) Refusal {
	return Refusal{
		Runner:  runner,
		Key:     pathKey(path),
		Path:    formatPath(path),
		Message: msg,
		Source:  source,
		Log:     RunnerLogLine(level, logMsg, fields...),
	}
}

// RunnerLogLine renders one log entry the way gitlab-runner's default log
// format, log.RunnerTextFormatter (log/runner_formatter.go, v19.3.0), does,
// without its colour codes and final newline. fields are key, value pairs.
//
// The formatter writes
//
//	fmt.Fprintf(b, "%s%s%-*s%s ", levelColor, levelPrefix, indentLength, entry.Message, resetColor)
//
// with indentLength = 50 - len(levelPrefix), then for each field, sorted by
// key, fmt.Fprintf(b, " %s%s%s=%v", levelColor, k, resetColor, v), then
// "\n". So the prefix and the message are left-aligned and padded with
// spaces to 50 columns (fmt counts runes; a longer message is not cut),
// followed by one space, and each field adds a space and key=value, values
// unquoted: a message with fields has two spaces after its 50 columns.
// The prefix is "FATAL: ", "ERROR: ", "WARNING: " or "PANIC: ", and nothing
// for info and debug. The runner never sets DisableColors, so a real line
// also holds ANSI codes even when not on a terminal: levelColor
// ("\x1b[31;1m" for fatal, error and panic, "\x1b[0;33m" for warning,
// "\x1b[37;1m" for debug, none for info) before the prefix and before each
// field key, and "\x1b[0;m" after the padded message and after each key,
// at every level. This function leaves them out.
//
// With --log-format text or json (the only other formats) logrus's own
// formatters print time=... level=... msg=... error=... or a JSON object
// instead. At start-up the format set by log_format in config.toml is not
// yet applied when a start-up refusal is printed.
func RunnerLogLine(level, msg string, fields ...string) string {
	prefix := map[string]string{
		"warning": "WARNING: ",
		"error":   "ERROR: ",
		"fatal":   "FATAL: ",
		"panic":   "PANIC: ",
	}[level]
	var b strings.Builder
	fmt.Fprintf(&b, "%s%-*s ", prefix, 50-len(prefix), msg)
	type kv struct{ k, v string }
	var kvs []kv
	for i := 0; i+1 < len(fields); i += 2 {
		kvs = append(kvs, kv{fields[i], fields[i+1]})
	}
	slices.SortStableFunc(kvs, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	for _, f := range kvs {
		fmt.Fprintf(&b, " %s=%s", f.k, f.v)
	}
	return b.String()
}
