package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
	"github.com/socialwebcomputer/doctor/report"
)

// CatalogEntry is one check of `doctor checks -o json|yaml`.
type CatalogEntry struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	// Executors are those the check applies to; ["any"] is every one.
	Executors []string `json:"executors"`
	// Requires are the checks that must not have failed for it to run.
	Requires []string `json:"requires"`
	// Explains are the checks whose findings fold under its own.
	Explains []string `json:"explains"`
	Network  bool     `json:"network"` // skipped under --offline
	Docs     string   `json:"docs"`
}

// Catalog is the catalog as data, sorted by ID.
func Catalog(catalog []*checks.Check) []CatalogEntry {
	out := []CatalogEntry{}
	for _, c := range catalog {
		e := CatalogEntry{ID: c.ID, Title: c.Title, Severity: c.Severity.String(),
			Executors: append([]string{}, c.Executors...), Requires: []string{},
			Explains: append([]string{}, c.Explains...), Network: c.Network, Docs: checks.DocsAnchor(c.ID)}
		if len(e.Executors) == 0 {
			e.Executors = []string{"any"}
		}
		for _, r := range checks.RequiredChecks(catalog, c) {
			e.Requires = append(e.Requires, r.ID)
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// encode writes v as JSON or YAML, with no unfit character (safetext).
func encode(w io.Writer, format string, v any) error {
	switch format {
	case "json":
		return safetext.WriteJSON(w, v)
	case "yaml":
		b, err := safetext.YAML(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("unknown format %q", format)
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError("unexpected argument %q: %s takes flags only (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return nil
}

func formatFlag(cmd *cobra.Command, p *string, def string, formats ...string) {
	cmd.Flags().StringVarP(p, "output", "o", def, "the output `FORMAT`: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

func checkFormat(cmd *cobra.Command, got string, formats ...string) error {
	for _, f := range formats {
		if got == f {
			return nil
		}
	}
	return usageError("%s: unknown output format %q (want %s)%s", cmd.CommandPath(), got, strings.Join(formats, ", "), didYouMean(suggest(got, formats)))
}

func (a *app) checksCommand() *cobra.Command {
	var output string
	formats := []string{"table", "wide", "json", "yaml"}
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List the checks: ID, severity, executors, title",
		Long: `List the catalog of checks, sorted by ID: each one's ID (its anchor in
docs/checks.md and doctor explain key), default severity, the executors it applies to and
its title. -o wide adds what it requires and explains; -o json and -o yaml
give all of it as data.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(cmd, output, formats...); err != nil {
				return err
			}
			catalog := all.Checks()
			if err := checks.Validate(catalog); err != nil {
				return &exitError{code: report.ExitCantRun, msg: "invalid catalog: " + err.Error()}
			}
			entries := Catalog(catalog)
			out := cmd.OutOrStdout()
			if output == "json" || output == "yaml" {
				return encode(out, output, entries)
			}
			rows := [][]string{{"ID", "SEVERITY", "EXECUTORS", "TITLE"}}
			if output == "wide" {
				rows[0] = []string{"ID", "SEVERITY", "EXECUTORS", "REQUIRES", "EXPLAINS", "TITLE"}
			}
			for _, e := range entries {
				id, title := safetext.Line(e.ID), safetext.Line(e.Title)
				if output == "wide" {
					rows = append(rows, []string{id, e.Severity, strings.Join(e.Executors, ","), dash(e.Requires), dash(e.Explains), title})
				} else {
					rows = append(rows, []string{id, e.Severity, strings.Join(e.Executors, ","), title})
				}
			}
			_, err := io.WriteString(out, columns(rows, a.width()))
			return err
		},
	}
	formatFlag(cmd, &output, "table", formats...)
	return cmd
}

// minTitle is the narrowest a last column may be beside the others; below
// it, the last column's text goes under its row.
const minTitle = 24

// maxList is the widest a column of comma-separated IDs (REQUIRES,
// EXPLAINS) grows: a longer list goes on under itself, after a comma.
const maxList = 34

// columns lays rows out in columns two spaces apart, as tabwriter would,
// with the last column's text wrapped to the width at spaces: in its
// column, or indented under its row when the other columns leave it less
// than minTitle. A list of IDs wider than maxList wraps after its commas,
// in its column.
func columns(rows [][]string, width int) string {
	n := len(rows[0])
	cells := make([][][]string, len(rows)) // row, column, line
	colW := make([]int, n-1)
	for ri, r := range rows {
		cells[ri] = make([][]string, n-1)
		for i := range colW {
			cells[ri][i] = wrapList(r[i], maxList)
			for _, l := range cells[ri][i] {
				colW[i] = max(colW[i], wrap.Width(l))
			}
		}
	}
	lead := 0
	for _, w := range colW {
		lead += w + 2
	}
	var b strings.Builder
	for ri, r := range rows {
		height := 1
		for _, c := range cells[ri] {
			height = max(height, len(c))
		}
		heads := make([]string, height)
		for h := range heads {
			var head strings.Builder
			for i, w := range colW {
				cell := ""
				if h < len(cells[ri][i]) {
					cell = cells[ri][i][h]
				}
				head.WriteString(cell + strings.Repeat(" ", w-wrap.Width(cell)+2))
			}
			heads[h] = head.String()
		}
		if width-lead >= minTitle {
			lines := wrap.Words(r[n-1], width, heads[0], strings.Repeat(" ", lead))
			for h := 1; h < height; h++ {
				if h < len(lines) {
					lines[h] = heads[h] + strings.TrimLeft(lines[h], " ")
				} else {
					lines = append(lines, strings.TrimRight(heads[h], " "))
				}
			}
			for _, l := range lines {
				fmt.Fprintln(&b, l)
			}
			continue
		}
		for _, head := range heads {
			for _, l := range wrap.Hang(strings.TrimRight(head, " "), width, "    ") {
				fmt.Fprintln(&b, l)
			}
		}
		for _, l := range wrap.Words(r[n-1], width, "    ", "    ") {
			fmt.Fprintln(&b, l)
		}
	}
	return b.String()
}

// wrapList is a cell on lines of at most max columns, broken after the
// commas of a list; a cell without one, or short enough, is one line.
func wrapList(cell string, max int) []string {
	if wrap.Width(cell) <= max || !strings.Contains(cell, ",") {
		return []string{cell}
	}
	var lines []string
	line := ""
	for _, item := range strings.SplitAfter(cell, ",") {
		if line != "" && wrap.Width(line+item) > max {
			lines = append(lines, line)
			line = ""
		}
		line += item
	}
	return append(lines, line)
}

func dash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func (a *app) explainCommand() *cobra.Command {
	var docs string
	cmd := &cobra.Command{
		Use:   "explain ID",
		Short: "Show a check's cause, symptom, fix and verification command",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("doctor explain takes one check ID, got %d (see doctor checks)", len(args))
			}
			return nil
		},
		ValidArgsFunction: completeCheckID,
		RunE: func(cmd *cobra.Command, args []string) error {
			var c *checks.Check
			catalog := all.Checks()
			for _, x := range catalog {
				if x.ID == args[0] {
					c = x
				}
			}
			if c == nil {
				return unknownCheck("explain", args[0])
			}
			// A check's doc is doctor's own words, quoting the runner's;
			// it is printed through safetext all the same, as every text.
			var b strings.Builder
			out := &b
			width := a.width()
			for _, l := range wrap.Words(fmt.Sprintf("%s — %s (default severity %s)", c.ID, c.Title, c.Severity), width, "", "  ") {
				fmt.Fprintln(out, l)
			}
			for _, sec := range []struct {
				label string
				lines []string
			}{
				{"Cause", wrap.Layout([]wrap.Segment{wrap.Prose(c.Doc.Cause)}, width, "  ")},
				{"Symptom", wrap.Layout([]wrap.Segment{wrap.Prose(c.Doc.Symptom)}, width, "  ")},
				// Sentences wrapped under the label, blocks at column 0, as
				// they are pasted (a heredoc's end line closes it only there).
				{"Fix", report.StepLines(c.Doc.Fix, width, "  ")},
				{"Verify", report.StepLines(c.Doc.Verify, width, "  ")},
			} {
				fmt.Fprintf(out, "\n%s:\n", sec.label)
				for _, l := range sec.lines {
					fmt.Fprintln(out, l)
				}
			}
			fmt.Fprintln(out)
			if len(c.Explains) > 0 {
				for _, l := range wrap.Words("Explains: "+strings.Join(c.Explains, ", "), width, "", "  ") {
					fmt.Fprintln(out, l)
				}
			}
			if req := checks.RequiredChecks(catalog, c); len(req) > 0 {
				ids := make([]string, len(req))
				for i, r := range req {
					ids[i] = r.ID
				}
				for _, l := range wrap.Words("Requires: "+strings.Join(ids, ", "), width, "", "  ") {
					fmt.Fprintln(out, l)
				}
			}
			fmt.Fprintf(out, "Applies to: %s runners\n", c.ExecutorList())
			if base := a.docsURL(docs); base != "" {
				fmt.Fprintf(out, "Docs: %s\n", docsLink(base, c.ID))
			}
			_, err := io.WriteString(cmd.OutOrStdout(), safetext.Lines(b.String()))
			return err
		},
	}
	docsFlag(cmd.Flags(), &docs)
	return cmd
}

// VersionInfo is `doctor version -o json`.
type VersionInfo struct {
	Version string `json:"version"`
	// Commit and Date are the VCS revision and commit time the binary was
	// built from: go build's vcs stamp, or go install's pseudo-version.
	// "" when the build carries neither.
	Commit   string `json:"commit"`
	Date     string `json:"date"`
	Modified bool   `json:"modified"` // built from a work tree with changes
	Go       string `json:"go"`
}

// pseudoVersion is a module pseudo-version's time and revision
// (v0.0.0-20261129120000-55279d6b1c2a, optionally +dirty).
var pseudoVersion = lazyre.MustCompile(`[-.]([0-9]{14})-([0-9a-f]{12})(\+incompatible)?(\+dirty)?$`)

// versionFrom reads the version, commit, date and Go version from a
// binary's build info.
func versionFrom(bi *debug.BuildInfo, ok bool) VersionInfo {
	v := VersionInfo{Version: Version, Go: runtime.Version()}
	if !ok || bi == nil {
		return v
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	mv := bi.Main.Version
	if Version == defaultVersion && mv != "" && mv != "(devel)" {
		v.Version = mv
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Date = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if m := pseudoVersion().FindStringSubmatch(mv); m != nil && v.Commit == "" {
		v.Commit = m[2]
		t := m[1]
		v.Date = t[0:4] + "-" + t[4:6] + "-" + t[6:8] + "T" + t[8:10] + ":" + t[10:12] + ":" + t[12:14] + "Z"
		v.Modified = v.Modified || m[4] != ""
	}
	return v
}

func currentVersion() VersionInfo {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(bi, ok)
}

// resolvedVersion is the version a report carries.
func resolvedVersion() string { return currentVersion().Version }

func (a *app) printVersion(w io.Writer, format string) error {
	v := currentVersion()
	if format == "json" || format == "yaml" {
		return encode(w, format, v)
	}
	commit := v.Commit
	if commit == "" {
		commit = "unknown (built without VCS information)"
	} else {
		if v.Date != "" {
			commit += " " + v.Date
		}
		if v.Modified {
			commit += " (modified)"
		}
	}
	fmt.Fprintf(w, "doctor %s\ncommit %s\n%s\n", safetext.Line(v.Version), safetext.Line(commit), safetext.Line(v.Go))
	return nil
}

func (a *app) versionCommand() *cobra.Command {
	var output string
	formats := []string{"text", "json", "yaml"}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, commit date and Go version",
		Long: `Print doctor's version, the commit and commit date it was built from, and
the Go version. The commit comes from the binary's build info (go build
stamps it from the work tree; go install carries it in the module's
pseudo-version).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(cmd, output, formats...); err != nil {
				return err
			}
			return a.printVersion(cmd.OutOrStdout(), output)
		},
	}
	formatFlag(cmd, &output, "text", formats...)
	return cmd
}
