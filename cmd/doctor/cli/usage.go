package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CommandTree is doctor's cobra command tree, as Main builds it.
func CommandTree() *cobra.Command {
	a := &app{io: IO{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}}
	return a.rootCommand()
}

// UsageMarkdown is the README's usage section, made from the command tree
// itself (a test compares it with README.md): every command with its use
// line and summary, then each command's flags as pflag describes them.
func UsageMarkdown(root *cobra.Command) string {
	var b strings.Builder
	var lines [][2]string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() && sub.Name() != "help" {
				continue
			}
			if sub.HasAvailableSubCommands() && sub.Name() != "completion" {
				walk(sub)
				continue
			}
			lines = append(lines, [2]string{sub.UseLine(), sub.Short})
		}
	}
	walk(root)
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "    %-*s  %s\n", width, l[0], l[1])
	}
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if c != root && !c.IsAvailableCommand() || c.Name() == "completion" {
			continue
		}
		var flags []*pflag.Flag
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Name != "help" {
				flags = append(flags, f)
			}
		})
		if len(flags) == 0 && c.Long == "" {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n", c.CommandPath())
		if c.Long != "" {
			fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(c.Long))
		}
		if len(flags) == 0 {
			continue
		}
		b.WriteString("\n| flag | meaning |\n|---|---|\n")
		for _, f := range flags {
			name, usage := pflag.UnquoteUsage(f)
			flag := "--" + f.Name
			if f.Shorthand != "" {
				flag = "-" + f.Shorthand + ", " + flag
			}
			if name != "" {
				flag += " " + name
			}
			if def := defaultText(f); def != "" {
				usage += " (default " + def + ")"
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", mdEscape(flag), mdEscape(usage))
		}
	}
	return b.String()
}

// defaultText is a flag's default as pflag's help prints it, or "" when
// pflag prints none.
func defaultText(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "[]", "0s":
		return ""
	}
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// mdEscape keeps a value inside its markdown table cell.
func mdEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
