package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Bounds of --journal: the journal of the last JournalSince, at most
// JournalLines lines of it (the newest), read within JournalTimeout.
const (
	JournalSince   = "24 hours ago"
	JournalLines   = 20000
	JournalTimeout = 10 * time.Second
	// JournalExportDir is where, under a --root other than /, a saved
	// export is read instead: <root>/var/log/journal-export/<unit>, as
	// `journalctl -u <unit> --since '24 hours ago' -o cat` writes it.
	JournalExportDir = "/var/log/journal-export"
)

// scanJournal reads the runner service's journal: journalctl on this host,
// a saved export under another --root (journalctl there would read this
// host's journal, not the root's).
func scanJournal(ctx context.Context, m *symptom.Matcher, env *hostio.Env) (*symptom.Scan, error) {
	unit, err := runnerUnit(ctx, env)
	if err != nil {
		return nil, err
	}
	if env.Root != "" && env.Root != "/" {
		path := JournalExportDir + "/" + unit
		b, err := env.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--journal under --root %s reads the saved export %s (journalctl -u %s --since '%s' -o cat > %s): %v",
				env.Root, path, unit, JournalSince, path, err)
		}
		return m.Scan("journal "+unit+" ("+path+")", bytes.NewReader(b))
	}
	bin, err := exec.LookPath("journalctl")
	if err != nil {
		return nil, fmt.Errorf("--journal needs journalctl, which this host does not have: save the runner's log to a file and give it to doctor why FILE")
	}
	ctx, cancel := context.WithTimeout(ctx, JournalTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--unit", unit, "--since", JournalSince, "--lines", fmt.Sprint(JournalLines),
		"--output", "cat", "--no-pager", "--quiet")
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("journalctl --unit %s: %v", unit, err)
	}
	s, scanErr := m.Scan("journal "+unit, out)
	// A scan that stopped at its bound leaves journalctl writing: end it,
	// then take the pipe to its end so Wait returns.
	if s.Truncated || scanErr != nil {
		cancel()
	}
	_, _ = io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	switch {
	case ctx.Err() != nil && !s.Truncated:
		return nil, fmt.Errorf("journalctl --unit %s did not finish within %s", unit, JournalTimeout)
	case scanErr != nil:
		return nil, fmt.Errorf("journalctl --unit %s: %v", unit, scanErr)
	case waitErr != nil && !s.Truncated:
		return nil, fmt.Errorf("journalctl --unit %s: %v: %s", unit, waitErr, strings.TrimSpace(stderr.String()))
	}
	return s, nil
}

// runnerUnit is the unit the service fact names (the process's --service,
// else gitlab-runner.service), evaluated as every check reads it.
func runnerUnit(ctx context.Context, env *hostio.Env) (string, error) {
	values, err := checks.Evaluate(ctx, env, hostfacts.ServiceFact, checks.Options{Timeout: JournalTimeout})
	if err != nil {
		return "", err
	}
	reason := "no result"
	if len(values) > 0 {
		if v := values[0]; v.Value != nil && v.Value.Name != "" {
			return v.Value.Name, nil
		}
		reason = values[0].Reason
	}
	return "", errors.New("--journal: could not tell the runner's unit: " + reason)
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
