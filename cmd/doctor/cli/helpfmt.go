package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/internal/text/wrap"
)

// Help is laid out as kubectl lays it out: the description, Examples, the
// usage line, the commands and the flags, every text wrapped to the
// terminal at spaces. A flag is its names and value, then its meaning:
// beside them when the terminal leaves the meaning room (flagColumnsFrom
// columns), on indented lines under them otherwise. A boolean flag shows no
// value: pflag prints "--offline[=true|false]", which says nothing a
// reader needs.

// flagColumnsFrom is the width from which a flag's meaning stands beside
// its names rather than under them.
const flagColumnsFrom = 100

// help is every command's help (cobra's SetHelpFunc): its description,
// re-flowed to the terminal, then its usage.
func (a *app) help(cmd *cobra.Command, _ []string) {
	w := cmd.OutOrStdout()
	text := cmd.Long
	if text == "" {
		text = cmd.Short
	}
	if text != "" {
		io.WriteString(w, reflow(strings.TrimSpace(text), a.width())+"\n\n")
	}
	if cmd.Runnable() || cmd.HasSubCommands() {
		io.WriteString(w, usageText(cmd, a.width()))
	}
}

// reflow wraps a description written for 80 columns to width: the lines
// of a paragraph join and wrap at spaces; a blank line ends a paragraph,
// and an indented line (a command to type) is printed as it is.
func reflow(s string, width int) string {
	var out, para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, wrap.Words(strings.Join(para, " "), width, "", "")...)
			para = nil
		}
	}
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			flush()
			out = append(out, "")
		case strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t"):
			flush()
			out = append(out, l)
		default:
			para = append(para, strings.TrimSpace(l))
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// usage is every command's usage (cobra's SetUsageFunc), at the width of
// the terminal doctor writes to.
func (a *app) usage(cmd *cobra.Command) error {
	_, err := io.WriteString(cmd.OutOrStderr(), usageText(cmd, a.width()))
	return err
}

func usageText(cmd *cobra.Command, width int) string {
	var b strings.Builder
	if cmd.Example != "" {
		b.WriteString("Examples:\n")
		for _, l := range strings.Split(strings.Trim(cmd.Example, "\n"), "\n") {
			// An example's comment is prose; its command is a block, whole.
			if c, ok := strings.CutPrefix(strings.TrimSpace(l), "# "); ok {
				for _, w := range wrap.Words(c, width, "  # ", "  # ") {
					fmt.Fprintln(&b, w)
				}
				continue
			}
			fmt.Fprintln(&b, l)
		}
		b.WriteString("\n")
	}
	b.WriteString("Usage:\n")
	if cmd.Runnable() {
		fmt.Fprintf(&b, "  %s\n", cmd.UseLine())
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "  %s [command]\n", cmd.CommandPath())
	}
	if cmd.HasAvailableSubCommands() {
		b.WriteString("\nAvailable Commands:\n")
		n := 0
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				n = max(n, len(c.Name()))
			}
		}
		for _, c := range cmd.Commands() {
			if !c.IsAvailableCommand() && c.Name() != "help" {
				continue
			}
			first := fmt.Sprintf("  %-*s  ", n, c.Name())
			for _, l := range wrap.Words(c.Short, width, first, strings.Repeat(" ", len(first))) {
				fmt.Fprintln(&b, l)
			}
		}
	}
	if cmd.HasAvailableLocalFlags() {
		b.WriteString("\nFlags:\n")
		b.WriteString(flagUsages(cmd.LocalFlags(), width))
	}
	if cmd.HasAvailableInheritedFlags() {
		b.WriteString("\nGlobal Flags:\n")
		b.WriteString(flagUsages(cmd.InheritedFlags(), width))
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\nUse \"%s [command] --help\" for more information about a command.\n", cmd.CommandPath())
	}
	return b.String()
}

// flagUsages is pflag's FlagUsages without "[=true|false]", wrapped to
// width: the meaning beside the names from flagColumnsFrom columns, under
// them, indented, below.
func flagUsages(fs *pflag.FlagSet, width int) string {
	type row struct{ names, usage string }
	var rows []row
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		names := "      --" + f.Name
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			names = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" && f.Value.Type() != "bool" {
			names += " " + varname
		}
		if def := defaultText(f); def != "" {
			usage += " (default " + def + ")"
		}
		if f.Deprecated != "" {
			usage += " (DEPRECATED: " + f.Deprecated + ")"
		}
		rows = append(rows, row{names, usage})
		n = max(n, len(names))
	})
	var b strings.Builder
	for _, r := range rows {
		if width >= flagColumnsFrom {
			first := fmt.Sprintf("%-*s   ", n, r.names)
			for _, l := range wrap.Words(r.usage, width, first, strings.Repeat(" ", len(first))) {
				fmt.Fprintln(&b, l)
			}
			continue
		}
		fmt.Fprintln(&b, r.names)
		for _, l := range wrap.Words(r.usage, width, "        ", "        ") {
			fmt.Fprintln(&b, l)
		}
	}
	return b.String()
}
