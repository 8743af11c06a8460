package report

import (
	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
)

// printable is the report as the table, wide and markdown renderers print
// it: a copy whose every text field went through safetext.Line, so that the
// renderers' own layout (spaces, newlines, colours, markdown) is all that
// is raw in what they write. The boundary is the field, not its producer:
// a cause is the check's sentence with a namespace, a pod's message or a
// config value inside it, and only the whole can be made fit. A fix is the
// one field with lines of its own (a heredoc, a drop-in), so it keeps its
// newlines and tabs (safetext.Lines). A cause, an evidence detail or a
// reason is one line: no check writes a newline in one, so a newline there
// came with a value and is shown as \n.
//
// Runner names are left as they are: every renderer prints them through
// %q (runnerTag), which escapes what Line would, and a cause quotes its
// runner the same way, which FindingTitle relies on to strip the label.
// JSON and YAML are rendered from the report itself: their encoders escape
// (safetext.JSON, safetext.YAML).
func printable(rep *Report) *Report {
	line := safetext.Line
	out := *rep
	out.Host = line(rep.Host)
	out.Args = lineAll(rep.Args)
	if rep.Bundle != nil {
		out.Bundle = &BundleInfo{File: line(rep.Bundle.File), Doctor: line(rep.Bundle.Doctor)}
	}
	out.Doctor.Version = line(rep.Doctor.Version)
	out.Summary.Incomplete = lineAll(rep.Summary.Incomplete)
	out.Runners = make([]Runner, len(rep.Runners))
	for i, r := range rep.Runners {
		out.Runners[i] = Runner{Index: r.Index, Name: r.Name, Executor: line(r.Executor)}
	}
	out.Findings = make([]Finding, len(rep.Findings))
	for i, f := range rep.Findings {
		g := f
		g.Check, g.Title, g.Cause, g.Docs = line(f.Check), line(f.Title), line(f.Cause), line(f.Docs)
		g.Fix, g.Fingerprint, g.Change = safetext.Lines(f.Fix), line(f.Fingerprint), line(f.Change)
		g.FixSteps = f.FixSteps.Map(safetext.Lines)
		if f.CausedBy != nil {
			by := line(*f.CausedBy)
			g.CausedBy = &by
		}
		g.Explains = lineAll(f.Explains)
		g.Evidence = make([]checks.Evidence, len(f.Evidence))
		for j, e := range f.Evidence {
			g.Evidence[j] = checks.Evidence{Source: line(e.Source), Detail: line(e.Detail)}
		}
		out.Findings[i] = g
	}
	out.Checks = make([]CheckStatus, len(rep.Checks))
	for i, c := range rep.Checks {
		c.ID, c.Reason = line(c.ID), line(c.Reason)
		out.Checks[i] = c
	}
	out.Ignores = make([]Ignore, len(rep.Ignores))
	for i, ig := range rep.Ignores {
		ig.Check, ig.Runner, ig.Fingerprint, ig.Reason = line(ig.Check), line(ig.Runner), line(ig.Fingerprint), line(ig.Reason)
		ig.Expires, ig.Source, ig.Status, ig.Note = line(ig.Expires), line(ig.Source), line(ig.Status), line(ig.Note)
		out.Ignores[i] = ig
	}
	out.Overrides = make([]Override, len(rep.Overrides))
	for i, o := range rep.Overrides {
		out.Overrides[i] = Override{Flag: line(o.Flag), Value: line(o.Value), Replaces: line(o.Replaces)}
	}
	out.CleanupErrors = lineAll(rep.CleanupErrors)
	out.Logs = make([]LogRead, len(rep.Logs))
	for i, l := range rep.Logs {
		l.Source = line(l.Source)
		out.Logs[i] = l
	}
	out.Matches = make([]Match, len(rep.Matches))
	for i, m := range rep.Matches {
		m.Source, m.Line, m.Check = line(m.Source), line(m.Line), line(m.Check)
		out.Matches[i] = m
	}
	// The verify line's words are encoded by the shell encoder, which
	// writes every character a terminal hides as an escape.
	out.Rerun = rep.Rerun
	return &out
}

func lineAll(s []string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = safetext.Line(x)
	}
	return out
}
