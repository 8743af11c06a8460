package cli

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/report"
)

// catalog is the catalog doctor run and analyze run: the registry's, unless IO names
// another.
func (a *app) catalog() []*checks.Check {
	if a.io.Checks != nil {
		return a.io.Checks
	}
	return all.Checks()
}

// CatalogMarkdown is the README's check catalog: one section per check,
// anchored at its ID, made from the check values themselves so the docs and
// `doctor explain` cannot drift apart (a test compares it with README.md).
func CatalogMarkdown(catalog []*checks.Check) string {
	var b strings.Builder
	b.WriteString("| ID | Severity | Executors | Title |\n|---|---|---|---|\n")
	for _, c := range catalog {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s |\n", c.ID, c.ID, c.Severity, c.ExecutorList(), c.Title)
	}
	for _, c := range catalog {
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n### %s\n\n%s. Default severity **%s**. Applies to: %s runners.\n\n",
			c.ID, c.ID, c.Title, c.Severity, c.ExecutorList())
		fmt.Fprintf(&b, "**Cause.** %s\n\n", c.Doc.Cause)
		fmt.Fprintf(&b, "**Symptom.**\n\n```\n%s\n```\n\n", c.Doc.Symptom)
		fmt.Fprintf(&b, "**Fix.**\n\n%s\n\n", report.CatalogSteps(c.Doc.Fix))
		fmt.Fprintf(&b, "**Verify.**\n\n%s\n", report.CatalogSteps(c.Doc.Verify))
		if len(c.Doc.Patterns) > 0 {
			b.WriteString("\n**Log lines it explains** (`doctor why`; `*` is any text):\n\n")
			for _, p := range c.Doc.Patterns {
				fmt.Fprintf(&b, "- `%s`\n", p)
			}
		}
		var own []checks.Sign
		type mayExplain struct{ what, or, tell string }
		var may []mayExplain
		for _, a := range c.Doc.Ambiguous {
			may = append(may, mayExplain{"`" + a.Pattern + "`", strings.Join(a.Or, ", or "), a.Tell})
		}
		for _, sg := range c.Doc.Signs {
			if len(sg.Or) > 0 {
				may = append(may, mayExplain{sg.String(), strings.Join(sg.Or, ", or "), sg.Tell})
			} else {
				own = append(own, sg)
			}
		}
		if len(own) > 0 {
			b.WriteString("\n**Log lines it explains by their parts** (`doctor why` reads a line without its producer's prefix, joined where a paste wrapped it: the endpoint it names, its innermost cause, its reason):\n\n")
			for _, sg := range own {
				fmt.Fprintf(&b, "- %s\n", sg)
			}
		}
		if len(may) > 0 {
			b.WriteString("\n**Log lines it may explain**, among other causes (`doctor why` names them all and what tells them apart):\n\n")
			for _, m := range may {
				fmt.Fprintf(&b, "- %s: or %s. To tell: %s.\n", m.what, m.or, strings.TrimSuffix(m.tell, "."))
			}
		}
		if req := checks.RequiredChecks(catalog, c); len(req) > 0 {
			ids := make([]string, len(req))
			for i, r := range req {
				ids[i] = "[" + r.ID + "](#" + r.ID + ")"
			}
			fmt.Fprintf(&b, "\nRuns after: %s.", strings.Join(ids, ", "))
		}
		if len(c.Explains) > 0 {
			ids := make([]string, len(c.Explains))
			for i, e := range c.Explains {
				ids[i] = "[" + e + "](#" + e + ")"
			}
			fmt.Fprintf(&b, " Explains: %s.", strings.Join(ids, ", "))
		}
		if c.Network {
			b.WriteString(" Needs the network: skipped under `--offline`.")
		}
		b.WriteString("\n")
	}
	return b.String()
}
