// Package configdecode checks that config.toml decodes as the runner decodes it.
package configdecode

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

var Check = &checks.Check{
	ID:       "config-decode",
	Title:    "config.toml decodes as the runner decodes it",
	Severity: checks.Critical,
	Doc: checks.Doc{
		Cause: "The runner decodes config.toml with BurntSushi/toml into typed fields at start-up and on every " +
			"reload. A syntax error, or a value of the wrong type (pre_build_script is a string, not an array; " +
			"output_limit and poll_timeout are integers), stops the process, and a reload error keeps the old " +
			"configuration running. A file that exists but cannot be read is the same FATAL. A missing file is not: " +
			"LoadConfig returns nil when os.Stat says it does not exist (common/config.go, v19.3.0), and the runner " +
			"runs with no [[runners]], logging `ERROR: Failed to load config stat <path>: no such file or directory` " +
			"every 3 seconds. A config that decodes can still be refused at load (common/config.go, common/labels.go, " +
			"log/configuration.go, v19.3.0): label keys or values that fail its regexps, more than 32 computed labels, an " +
			"invalid log_level or log_format, [runners.machine] autoscaling periods or job_queuing_durations periods that " +
			"do not compile, MachineOptionsWithName without %s.",
		Symptom: "FATAL: Service run failed                           error=decoding configuration file: toml: line 9 (last key \"runners.output_limit\"): expected value but found '=' instead",
		Fix:     checks.Text("Correct the quoted line so it has the type the runner expects, then restart the runner."),
		Verify: checks.Target(checks.Sh(`sudo gitlab-runner verify --config "$RUNNER_CONFIG"
doctor run --only config-decode`)),
		Patterns: []string{
			// common/config.go, v19.3.0: fmt.Errorf("decoding configuration file: %w", err).
			"decoding configuration file: ",
			// common/config.go, v19.3.0: fmt.Errorf("loading configuration for %s runner: %w", r.Name, err).
			"loading configuration for * runner: ",
			// The same error up to v19.2.2 (common/config.go, v19.1.0 and v19.2.2): "loading coniguration for %s runner: %w".
			"loading coniguration for * runner: ",
			// common/config.go, v19.3.0: fmt.Errorf("invalid config: %w", err), behind
			// commands/multi.go's Fatal("Service run failed").
			"Service run failed*invalid config: ",
			// docs/configuration/autoscale.md, v19.3.0, as an older runner printed a decode error:
			// "FATAL: Service run failed   error=toml: cannot load TOML value of type int64 into a Go float".
			"Service run failed*toml: ",
			// commands/multi.go, v19.3.0: mr.log().Errorln("Failed to load config", err) on a reload.
			"Failed to load config",
			// v15.0.0 to v15.8 return toml.DecodeFile's error unwrapped (common/config.go LoadConfig),
			// BurntSushi/toml v0.3.1: a parse error is parse.go's "Near line %d (last key parsed '%s'): %s"
			// (no "toml: "), a type error decode.go's "toml: cannot load TOML value of type %T into a Go
			// %s"; gitlab-runner verify, register and install print it as "FATAL: <err>", without
			// "Service run failed" (riemers/ansible-gitlab-runner#59, #88).
			"Near line * (last key parsed '",
			"FATAL: toml: ",
		},
	},
	Requires: []checks.Node{configfacts.ConfigFact, hostfacts.RunAsFact},
	// A config the runner refuses is why its process is gone.
	Explains: []string{"runner-process"},
	Run:      run,
}

func run(p *checks.Pass) error {
	c := configfacts.ConfigFact.Get(p)
	if c.Path == "" {
		if c.Unknown {
			return errors.New(c.Unlocated)
		}
		return checks.Skip("%s", c.Unlocated)
	}
	located := checks.Evidence{Source: c.Path, Detail: "located by " + c.How}
	if errors.Is(c.ReadErr, os.ErrNotExist) {
		// The runner's LoadConfig returns nil when os.Stat says the file does
		// not exist: it runs with an empty configuration, with no FATAL.
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause: fmt.Sprintf("config.toml does not exist (%s): the runner treats a missing file as empty and runs "+
				"with no [[runners]], so it takes no job and logs no error.", c.Path),
			Evidence: []checks.Evidence{located, {Source: c.Path, Detail: "no such file or directory"}},
			Fix:      checks.Text("Point the runner at its real config.toml (--config or CONFIG_FILE), or restore the file, then restart it."),
		})
		return nil
	}
	if errors.Is(c.ReadErr, hostio.ErrTooLarge) {
		// doctor refuses to load it; the runner would try, so claim no FATAL.
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause: fmt.Sprintf("config.toml %s is larger than %d MiB: no runner configuration is that large, so this is not "+
				"the file it should be; doctor did not read it.", c.Path, hostio.MaxFileSize>>20),
			Evidence: []checks.Evidence{located},
			Fix:      checks.Text("Point the runner at its real config.toml (--config or CONFIG_FILE), or restore the file, then restart it."),
		})
		return nil
	}
	if err := hostfacts.DoctorCannotRead(p.Env, c.ReadPath(), c.ReadErr, hostfacts.RunAsFact.Get(p)); err != nil {
		return err
	}
	if c.ReadErr != nil {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("config.toml cannot be read (%v): the runner exits at start-up with a FATAL.", c.ReadErr),
			Evidence: []checks.Evidence{located,
				{Source: "runner log", Detail: runnerconfig.FatalLine(runnerconfig.LoadError(c.ReadErr))}},
			Fix: checks.Text("Point the runner at its real config.toml (--config or CONFIG_FILE), or restore the file, then restart it."),
		})
		return nil
	}
	if c.DecodeErr != nil {
		ev := []checks.Evidence{located,
			{Source: "runner log", Detail: runnerconfig.FatalLine(runnerconfig.LoadError(c.DecodeErr))}}
		if c.DecodeLine > 0 {
			ev = append(ev, checks.Evidence{Source: fmt.Sprintf("%s:%d", c.Path, c.DecodeLine), Detail: c.DecodeLineText})
		}
		p.Report(checks.Finding{
			Cause:    "config.toml does not decode: " + c.DecodeErr.Error(),
			Evidence: ev,
		})
		return nil
	}
	refusals(p, c, located)
	if len(c.Config.Runners) == 0 {
		f := checks.Finding{
			Severity: checks.Error,
			Cause:    "config.toml decodes but has no [[runners]]: the process runs and takes no job.",
			Evidence: []checks.Evidence{located},
			Fix:      checks.Text("Register the runner again (the runner-token check's fix says how), or restore its [[runners]] block."),
		}
		// A [[runner]] typo: registering again would add a second block and
		// keep the typo.
		for _, occ := range runnerconfig.Undecoded(c.Data, c.Meta) {
			if len(occ.Key) == 1 && strings.HasPrefix(strings.ToLower(occ.Key[0]), "runner") && occ.Line > 0 {
				f.Cause += fmt.Sprintf(" Line %d has [[%s]], which the runner does not read.", occ.Line, occ.Key[0])
				f.Evidence = append(f.Evidence, checks.Evidence{Source: fmt.Sprintf("%s:%d", c.Path, occ.Line), Detail: "[[" + occ.Key[0] + "]]"})
				f.Fix = checks.Text(fmt.Sprintf("Rename [[%s]] on line %d to [[runners]], then restart the runner.", occ.Key[0], occ.Line))
				break
			}
		}
		p.Report(f)
	}
	return nil
}

// refusals reports what the runner refuses in a config that decodes: at
// start-up each fatal one ends the process as a decode error does; the
// others it logs and goes on without the setting.
func refusals(p *checks.Pass, c *configfacts.ConfigFile, located checks.Evidence) {
	for _, r := range runnerconfig.Refusals(c.Config) {
		f := checks.Finding{
			Severity: checks.Critical,
			Evidence: []checks.Evidence{located, {Source: "runner log", Detail: r.Log}},
		}
		if r.Runner >= 0 {
			f.Runner = configfacts.RefOf(r.Runner, c.Config.Runners[r.Runner])
		}
		if n := runnerconfig.LocatePath(c.Data, r.Path); n > 0 {
			f.Evidence = append(f.Evidence, checks.Evidence{Source: fmt.Sprintf("%s:%d", c.Path, n), Detail: c.LineText(n)})
		}
		if r.Fatal {
			f.Cause = fmt.Sprintf("The runner refuses %s at start-up (%s) and exits: %s", r.Path, r.Source, r.Message)
			f.Fix = checks.Text("Correct " + r.Path + " as the runner's message says, then restart the runner.")
		} else {
			f.Severity = checks.Warning
			f.Cause = fmt.Sprintf("The runner logs a problem with %s (%s) and goes on without it: %s", r.Path, r.Source, r.Message)
			f.Fix = checks.Text("Correct " + r.Path + " as the runner's message says; the runner picks it up on its next reload.")
		}
		p.Report(f)
	}
}
