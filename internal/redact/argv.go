package redact

import (
	"slices"
	"strings"
)

// A gitlab-runner command line is kept by allow-list: the subcommand, every
// flag's name, and the values of the few flags that are the runner
// process's own options (where its config is, its service, user and
// working directory, how it logs); the value of every other flag, and every
// other word, becomes a stand-in. Every setting of config.toml is also a
// flag of run-single, register and the other commands that take
// [[runners]] settings on the command line (--kubernetes-bearer_token,
// --cache-s3-secret-key, --ssh-password, --token, ...: the runner builds
// them from its config structs, gitlab.com/ayufan/golang-cli-helpers
// joining each namespace:"" tag and the long:"" tag with "-"), and a
// unit's ExecStart= is a command line too: no setting's value is kept,
// whatever its name says, and a flag no list knows keeps no value either.
//
// Argv applies where a command line is read (facts, for a /proc/PID/cmdline
// and a unit's ExecStart=) and where a bundle writes one, so a live run,
// its bundle and analyze read the same words.

// runFlags are the options of `gitlab-runner run` (RunCommand,
// commands/multi.go, v19.3.0): the only flags that command takes, none of
// them a setting. Their values are kept: doctor reads --config and
// --service, and the rest name a user, a directory, an address.
var runFlags = map[string]bool{ // name: takes a value
	"listen-address":    true,
	"config":            true,
	"c":                 true,
	"service":           true,
	"n":                 true,
	"working-directory": true,
	"d":                 true,
	"user":              true,
	"u":                 true,
	"syslog":            false,
}

// globalFlags are the flags gitlab-runner takes before its subcommand:
// log/configuration.go (debug, log-format, log-level, l) and
// helpers/cli/cpuprofile.go (cpuprofile) of v19.3.0, and urfave/cli
// v1.22's own help and version. Their values are a level, a format and a
// path, and are kept.
var globalFlags = map[string]bool{
	"debug":      false,
	"log-format": true,
	"log-level":  true,
	"l":          true,
	"cpuprofile": true,
	"help":       false,
	"h":          false,
	"version":    false,
	"v":          false,
}

// commandFlags are the flags of the commands other than run that are not
// settings, and whether each takes a value: register's
// (commands/register.go, v19.3.0), run-single's own (commands/single.go),
// and the service commands' (commands/service.go: install's password is a
// Windows account's). None of their values is kept but --config's.
var commandFlags = map[string]bool{
	"non-interactive": false, "leave-runner": false, "run-untagged": false, "locked": false, "paused": false,
	"tag-list": true, "registration-token": true, "r": true, "access-level": true, "maximum-timeout": true, "maintenance-note": true,
	"wait-timeout": true, "max-builds": true, "runner": true, "shutdown-timeout": true,
	"syslog": false, "user-service": false, "init-user": true, "i": true, "password": true, "p": true,
}

// Argv is args (args[0] the program) with every value no allow-list keeps
// replaced by standIn(value): for `run`, the values of runFlags; for any
// subcommand, --config (-c: a path); before the subcommand, the global
// flags'. A flag takes the next word as its value when the runner's
// definitions say it takes one (settingFlags, derived from the runner's
// config structs, TestRunnerFlagsFromSource), as Go's flag package does,
// whatever that word looks like; a flag no definition knows takes it
// unless it starts with "-". Words after "--" and arguments after the
// subcommand are replaced too. args itself is not changed.
func Argv(args []string, standIn func(string) string) []string {
	out := append([]string(nil), args...)
	sub := ""
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			for j := i + 1; j < len(out); j++ {
				out[j] = standIn(out[j])
			}
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if sub == "" {
				sub = a // the subcommand: kept
			} else {
				out[i] = standIn(a) // an argument: no command doctor reads takes one
			}
			continue
		}
		dashes := "-"
		if strings.HasPrefix(a, "--") {
			dashes = "--"
		}
		name, val, hasVal := strings.Cut(a[len(dashes):], "=")
		keep, takes, known := flagKind(sub, name)
		next := i+1 < len(out)
		switch {
		case hasVal && !keep:
			out[i] = dashes + name + "=" + standIn(val)
		case hasVal:
		case !next:
		case takes || !known && sub != "" && !strings.HasPrefix(out[i+1], "-"):
			if !keep {
				out[i+1] = standIn(out[i+1])
			}
			i++
		}
	}
	return out
}

// flagKind says of a flag under subcommand sub ("" before it) whether its
// value is kept, whether it takes a value, and whether any definition
// knows it.
func flagKind(sub, name string) (keep, takes, known bool) {
	if sub == "" {
		takes, known = globalFlags[name]
		return known, takes, known
	}
	if sub == "run" {
		takes, known = runFlags[name]
		return known, takes, known
	}
	if name == "config" || name == "c" {
		return true, true, true
	}
	if takes, known = commandFlags[name]; known {
		return false, takes, known
	}
	takes, known = settingFlags[name]
	return false, takes, known
}

// SettingFlags are the names of the flags the runner derives from its
// config structs (settingFlags), sorted: what a test plants secrets under.
func SettingFlags() []string {
	out := make([]string, 0, len(settingFlags))
	for f := range settingFlags {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
