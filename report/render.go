package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
)

// Formats lists the -o values of doctor run ("md" is markdown too).
var Formats = []string{"table", "wide", "json", "yaml", "markdown"}

// ValidFormat says whether f is one of Formats or md.
func ValidFormat(f string) bool {
	for _, x := range Formats {
		if f == x {
			return true
		}
	}
	return f == "md"
}

// Options say how a report is rendered for its reader. They change the
// table only; json, yaml and markdown are the same everywhere.
type Options struct {
	// Colour is the caller's decision: a terminal, and NO_COLOR unset.
	Colour bool
	// UTF8 draws linkerd's status glyphs (√ × ‼) and └; false draws ASCII.
	UTF8 bool
	// Width is the terminal's width in columns; 0 means DefaultWidth. Below
	// StackedBelow the table becomes one block per finding.
	Width int
}

const (
	// DefaultWidth is the width of a table that goes to no terminal.
	DefaultWidth = 120
	// StackedBelow is the width under which findings are stacked blocks
	// instead of table rows.
	StackedBelow = 100
)

// Render writes the report in one format at DefaultWidth, in UTF-8, with
// the given colour decision.
func Render(w io.Writer, rep *Report, format string, colour bool) error {
	return RenderWith(w, rep, format, Options{Colour: colour, UTF8: true})
}

// RenderWith writes the report in one format.
func RenderWith(w io.Writer, rep *Report, format string, opt Options) error {
	if opt.Width <= 0 {
		opt.Width = DefaultWidth
	}
	switch format {
	case "json":
		return safetext.WriteJSON(w, rep)
	case "yaml":
		b, err := safetext.YAML(rep)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "table":
		return renderTable(w, printable(rep), opt, false)
	case "wide":
		return renderTable(w, printable(rep), opt, true)
	case "markdown", "md":
		return renderMarkdown(w, printable(rep))
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

var severityColour = map[checks.Severity]text.Colors{
	checks.Critical: {text.FgHiRed, text.Bold},
	checks.Error:    {text.FgRed},
	checks.Warning:  {text.FgYellow},
	checks.Info:     {text.FgCyan},
}

// glyphs are the status marks of one character set.
type glyphs struct {
	pass, fail, warn, info, unknown, skipped, tree string
}

var (
	utf8Glyphs  = glyphs{pass: "√", fail: "×", warn: "‼", info: "i", unknown: "?", skipped: "-", tree: "└ "}
	asciiGlyphs = glyphs{pass: "ok", fail: "x", warn: "!!", info: "i", unknown: "?", skipped: "-", tree: "`- "}
)

func glyphsFor(opt Options) glyphs {
	if opt.UTF8 {
		return utf8Glyphs
	}
	return asciiGlyphs
}

func (g glyphs) severity(s checks.Severity) string {
	switch {
	case s >= checks.Error:
		return g.fail
	case s == checks.Warning:
		return g.warn
	}
	return g.info
}

func (g glyphs) status(s checks.Status) string {
	switch s {
	case checks.StatusPass:
		return g.pass
	case checks.StatusFail:
		return g.fail
	case checks.StatusUnknown:
		return g.unknown
	}
	return g.skipped
}

func (g glyphs) exit(code int) string {
	switch code {
	case ExitOK:
		return g.pass
	case ExitWarning:
		return g.warn
	}
	return g.fail
}

// renderTail is what follows the findings: the summary line, what made
// the run incomplete, the checks' statuses, overrides, ignores and cleanup
// failures. width 0 leaves lines unwrapped.
func renderTail(w io.Writer, rep *Report, g glyphs, width int) {
	s := rep.Summary
	line := func(format string, a ...any) {
		for _, l := range wrap.Words(fmt.Sprintf(format, a...), width, "", "  ") {
			fmt.Fprintln(w, l)
		}
	}
	expired := ""
	if s.ExpiredIgnores > 0 {
		expired = ", " + plural(s.ExpiredIgnores, "expired ignore")
	}
	line("%s %d of %s ran: %d pass, %d fail, %d unknown, %d skipped. Findings: %d critical, %s, %s, %d info (%s)%s. Exit %d.",
		g.exit(s.ExitCode), s.Ran, plural(s.Checks, "check"), s.Pass, s.Fail, s.Unknown, s.Skipped,
		s.Critical, plural(s.Error, "error"), plural(s.Warning, "warning"), s.Info,
		plural(s.Roots, "root cause"), expired, s.ExitCode)
	for _, why := range s.Incomplete {
		line("Incomplete: %s.", why)
	}
	// With no runner found, say where doctor looked (the process, the
	// unit, the config paths), which the checks that found nothing give as
	// their reasons, without --verbose.
	looked := map[string]bool{}
	noRunner := len(rep.Runners) == 0 && !rep.Verbose
	if noRunner {
		for _, c := range rep.Checks {
			if c.Status == checks.StatusSkipped && searchedFor(c.Reason) {
				line("No runner was found here; where doctor looked:")
				break
			}
		}
	}
	for _, c := range rep.Checks {
		searched := noRunner && c.Status == checks.StatusSkipped && searchedFor(c.Reason) && !looked[c.Reason]
		if searched {
			looked[c.Reason] = true
		}
		if c.Status == checks.StatusUnknown || rep.Verbose || searched {
			id := c.ID
			if c.Runner != nil {
				id += " " + runnerTag(c.Runner)
			}
			l := fmt.Sprintf("%s %-7s %s (%dms)", g.status(c.Status), c.Status, id, c.DurationMs)
			if c.Reason != "" {
				l += ": " + c.Reason
			}
			line("%s", l)
		}
	}
	for _, o := range rep.Overrides {
		line("%s %s %s: used instead of %s.", g.warn, o.Flag, o.Value, o.Replaces)
	}
	for _, e := range rep.CleanupErrors {
		line("%s cleanup failed, remove by hand: %s", g.fail, e)
	}
	for _, ig := range rep.Ignores {
		name := ignoreName(ig)
		if ig.Source != "" {
			name += " (" + ig.Source + ")"
		}
		switch ig.Status {
		case IgnoreMatched:
			line("ignore %s hid %s: %s", name, plural(ig.Matched, "finding"), ig.Reason)
		case IgnoreExpired:
			line("%s ignore %s %s. Its reason was: %s", g.warn, name, ig.Note, ig.Reason)
		case IgnoreNotEvaluated:
			line("ignore %s not evaluated: %s. Its reason: %s", name, ig.Note, ig.Reason)
		default:
			line("ignore %s matched nothing (%s): %s", name, ig.Reason, ig.Note)
		}
	}
}

// searchedFor says a skipped check's reason is what it looked for and did
// not find (a unit, a config file), not a dependency, --offline or an
// executor it does not apply to.
func searchedFor(reason string) bool {
	return reason != "" && reason != "offline" && !strings.HasPrefix(reason, "needs ") && !strings.HasPrefix(reason, "applies to ")
}

// ignoreName is an ignore as it is written: ID[:RUNNER][@FINGERPRINT].
func ignoreName(ig Ignore) string {
	s := ig.Check
	if ig.Runner != "" {
		s += ":" + ig.Runner
	}
	if ig.Fingerprint != "" {
		s += "@" + ig.Fingerprint
	}
	return s
}

// verifyCommand is the command that shows a finding's fix worked: this
// run's input, only that check, only that runner.
func verifyCommand(rep *Report, f Finding) string {
	argv := rep.Rerun
	if len(argv) == 0 {
		argv = []string{"doctor", "run"}
	}
	cmd := fixcode.Command(argv[0], argv[1:]...).Arg("--only", f.Check)
	if f.Runner != nil && f.Runner.Index > 0 {
		cmd = cmd.Arg("--runner", strconv.Itoa(f.Runner.Index))
	}
	text, err := fixcode.Commands(cmd).Render()
	if err != nil {
		// An input flag's value the encoder refuses (a NUL, a value that
		// looks like a secret): the check alone, on this host.
		text, _ = fixcode.Commands(fixcode.Command("doctor", "run", "--only", f.Check)).Render()
	}
	return text
}

// runnerTag is the short form a table cell has room for: `#2 "b"`.
func runnerTag(r *checks.RunnerRef) string {
	if r.Name == "" {
		return fmt.Sprintf("#%d", r.Index)
	}
	return fmt.Sprintf("#%d %q", r.Index, r.Name)
}

func runnerCell(r *checks.RunnerRef) string {
	if r == nil {
		return "host"
	}
	return runnerTag(r)
}
