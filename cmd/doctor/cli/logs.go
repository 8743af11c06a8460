package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
)

// scanLogs reads the logs this invocation names (doctor why's FILE|-,
// --log, --journal) and matches them against the catalog's patterns. A
// log that cannot be read is exit 3 naming it: what the operator pasted
// must be what was read.
func (a *app) scanLogs(ctx context.Context, f *runFlags, env *hostio.Env) ([]*symptom.Scan, error) {
	m, err := symptom.New(all.Checks())
	if err != nil {
		return nil, &exitError{code: report.ExitCantRun, msg: "invalid catalog: " + err.Error()}
	}
	var scans []*symptom.Scan
	for _, path := range []string{f.whyArg, f.log} {
		if path == "" {
			continue
		}
		s, err := a.scanFile(m, path)
		if err != nil {
			return nil, &exitError{code: report.ExitCantRun, msg: err.Error()}
		}
		scans = append(scans, s)
	}
	if f.journal {
		s, err := scanJournal(ctx, m, env)
		if err != nil {
			return nil, &exitError{code: report.ExitCantRun, msg: err.Error()}
		}
		scans = append(scans, s)
	}
	return scans, nil
}

// scanFile reads a log the operator names, as given (never under --root:
// it is their artifact, not the host's): "-" is stdin. Only a regular
// file is read; a FIFO or a device could block or never end, and stdin
// already serves a pipe.
func (a *app) scanFile(m *symptom.Matcher, path string) (*symptom.Scan, error) {
	if path == "-" {
		if a.io.In == nil {
			return nil, errors.New("-: no standard input to read the log from")
		}
		return m.Scan("-", a.io.In)
	}
	if pastedLine(path) {
		return m.Scan(pastedSource, strings.NewReader(path))
	}
	// O_NONBLOCK: opening a FIFO with no writer returns at once, and the
	// stat below refuses it.
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", path, unwrapPath(err))
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", path, unwrapPath(err))
	}
	switch {
	case st.IsDir():
		return nil, fmt.Errorf("log %s is a directory: name the job log file in it", path)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("log %s is %s, not a regular file: pipe it in instead (… | doctor why -)", path, hostio.FileType(st.Mode()))
	case st.Size() > symptom.MaxInput:
		return nil, fmt.Errorf("log %s is %d MiB, more than the %d MiB doctor reads of a log: give it the end, tail -c %dM %s | doctor why -",
			path, st.Size()>>20, symptom.MaxInput>>20, symptom.MaxInput>>20, fixcode.Quote(path))
	}
	return m.Scan(path, io.Reader(fh))
}

// pastedSource names a log line given as doctor why's argument.
const pastedSource = "the line given"

// pastedLine says an argument of doctor why is a log line pasted whole,
// not a file: no file of that name exists, it has a space or a line end,
// which a log line has and a path the operator typed rarely does, and it
// does not start as a path does (/, ./, ../, ~/). A missing path stays an
// error that names it.
func pastedLine(arg string) bool {
	if !strings.ContainsAny(arg, " \t\n") {
		return false
	}
	for _, p := range []string{"/", "./", "../", "~/"} {
		if strings.HasPrefix(arg, p) {
			return false
		}
	}
	_, err := os.Lstat(arg)
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// logReport puts what the logs held into the report: each log read, and
// each line that names a check, once per check.
func logReport(rep *report.Report, scans []*symptom.Scan) {
	for _, s := range scans {
		rep.Logs = append(rep.Logs, report.LogRead{Source: s.Source, Lines: s.Lines, MatchedLines: len(s.Matches) + s.Omitted,
			Omitted: s.Omitted, LongLines: s.LongLines, Truncated: s.Truncated})
		for _, x := range s.Matches {
			for _, id := range x.Checks {
				m := report.Match{Source: s.Source, LineNumber: x.Line, Line: x.Text, Check: id}
				m.OneOf, m.Tell = oneOfFor(x, id)
				rep.Matches = append(rep.Matches, m)
			}
		}
	}
}

// oneOfFor is the causes of x's ambiguous verdicts that hold check id, and
// what tells them apart; nothing when id is the line's for sure.
func oneOfFor(x symptom.Match, id string) ([]string, string) {
	var causes, tells []string
	for _, o := range x.OneOf {
		if !slices.Contains(o.Causes, id) {
			continue
		}
		for _, c := range o.Causes {
			if !slices.Contains(causes, c) {
				causes = append(causes, c)
			}
		}
		tells = append(tells, o.Tell)
	}
	return causes, strings.Join(tells, "; ")
}

// matchedChecks are the checks any log named, in catalog order, each once.
func matchedChecks(scans []*symptom.Scan) []string {
	seen := map[string]bool{}
	for _, s := range scans {
		for _, id := range s.Checks {
			seen[id] = true
		}
	}
	var out []string
	for _, c := range all.Checks() {
		if seen[c.ID] {
			out = append(out, c.ID)
		}
	}
	return out
}
