package report

import "github.com/socialwebcomputer/doctor/checks"

// LogRead is one log doctor read for its symptoms (doctor why, doctor run
// --log, --journal): where from, how much of it, and what was left out.
type LogRead struct {
	Source string `json:"source"` // the path, "-" for stdin, or "journal <unit>"
	Lines  int    `json:"lines"`
	// MatchedLines counts the lines that named a check; Omitted of them are
	// not in matches (a symptom repeated past the first 100 lines).
	MatchedLines int `json:"matchedLines"`
	Omitted      int `json:"omitted"`
	// LongLines were cut at 64 KiB; Truncated says the log went on past
	// 64 MiB and the rest was not read.
	LongLines int  `json:"longLines"`
	Truncated bool `json:"truncated"`
}

// Job is what GitLab's Jobs API said of the job doctor job diagnosed, and
// the runner of this host it ran on. Every string is GitLab's, printed
// escaped as any input is.
type Job struct {
	ID            int64  `json:"id"`
	Project       string `json:"project"`
	Name          string `json:"name"`
	Stage         string `json:"stage"`
	Status        string `json:"status"`
	FailureReason string `json:"failureReason"`
	WebURL        string `json:"webUrl"`
	// Runner is the runner GitLab recorded: its id, description, and its
	// runner manager's system_id and version; nil when no runner took it.
	Runner *JobRunner `json:"runner"`
	// Entry is the [[runners]] entry of this host it ran on, and How how
	// doctor knows; nil when none of this host's did.
	Entry *checks.RunnerRef `json:"entry"`
	How   string            `json:"how,omitempty"`
}

// JobRunner is the runner of a job, as GitLab recorded it.
type JobRunner struct {
	ID             int64  `json:"id"`
	Description    string `json:"description"`
	SystemID       string `json:"systemId,omitempty"`
	ManagerVersion string `json:"managerVersion,omitempty"`
}

// Match is one line of a log that names a check: one entry per check a
// line names.
type Match struct {
	Source     string `json:"source"`
	LineNumber int    `json:"lineNumber"` // from 1
	Line       string `json:"line"`       // without colours and section markers, redacted
	Check      string `json:"check"`
	// OneOf and Tell are present when the line has several possible
	// causes, this check one of them: every cause (check IDs, then causes
	// no check probes, each "not a doctor check: …") and what tells them
	// apart.
	OneOf []string `json:"oneOf,omitempty"`
	Tell  string   `json:"tell,omitempty"`
}

// RankFirst moves the findings of the given checks ahead of the others:
// each root cause whose tree holds one of their findings, with that tree,
// in the order the ranking gave them. The checks a log names are why the
// operator asked, so their findings (or the causes they fold under) lead.
func (r *Report) RankFirst(ids []string) {
	if len(ids) == 0 {
		return
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	// Findings are trees flattened in rank order: a tree starts at a root.
	var trees [][]Finding
	for _, f := range r.Findings {
		if f.CausedBy == nil || len(trees) == 0 {
			trees = append(trees, nil)
		}
		trees[len(trees)-1] = append(trees[len(trees)-1], f)
	}
	first, rest := []Finding{}, []Finding{}
	for _, t := range trees {
		named := false
		for _, f := range t {
			named = named || want[f.Check]
		}
		if named {
			first = append(first, t...)
		} else {
			rest = append(rest, t...)
		}
	}
	r.Findings = append(first, rest...)
	for i := range r.Findings {
		r.Findings[i].Rank = i + 1
	}
}
