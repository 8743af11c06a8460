package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
)

// DoctorFile is the default name of doctor's own settings file, read from
// the working directory when --config-file does not name another.
const DoctorFile = ".doctor.yaml"

// parseIgnores reads each --ignore ID[:RUNNER][@FINGERPRINT]:REASON. The
// reason is required, so every suppression says why it exists. With one
// colon the rest is the reason; with two or more, the field between the
// first two is the runner (its index, name, or * for every runner), so a
// reason that contains a colon is written ID:*:reason.
func parseIgnores(vals []string) ([]report.Ignore, error) {
	var out []report.Ignore
	for _, v := range vals {
		ig, err := parseIgnore(v)
		if err != nil {
			return nil, err
		}
		out = append(out, ig)
	}
	return out, nil
}

func parseIgnore(v string) (report.Ignore, error) {
	bad := func(why string) (report.Ignore, error) {
		return report.Ignore{}, usageError("--ignore %q: %s; want ID[:RUNNER][@FINGERPRINT]:REASON", v, why)
	}
	head, rest, ok := strings.Cut(v, ":")
	if !ok {
		return bad("the reason is required")
	}
	ig := report.Ignore{Source: "--ignore"}
	id, fp, hasFP := strings.Cut(head, "@")
	ig.Check = strings.TrimSpace(id)
	if hasFP {
		ig.Fingerprint = strings.TrimSpace(fp)
		ig.Reason = rest
	} else if sel, reason, two := strings.Cut(rest, ":"); two {
		ig.Runner, ig.Reason = strings.TrimSpace(sel), reason
		// A fingerprint after the runner: the last @ followed by one.
		if i := strings.LastIndex(ig.Runner, "@"); i >= 0 && report.ValidFingerprint(ig.Runner[i+1:]) {
			ig.Runner, ig.Fingerprint = ig.Runner[:i], ig.Runner[i+1:]
		}
		if ig.Runner == "" {
			return bad("the runner is empty")
		}
	} else {
		ig.Reason = rest
	}
	ig.Reason = strings.TrimSpace(ig.Reason)
	switch {
	case ig.Check == "":
		return bad("the check ID is empty")
	case ig.Reason == "":
		return bad("the reason is required")
	case hasFP && !report.ValidFingerprint(ig.Fingerprint):
		return bad(fmt.Sprintf("a fingerprint is %d hex digits, as -o wide or -o json shows it", report.FingerprintLen))
	}
	if err := validCheckIDs("--ignore "+v, []string{ig.Check}); err != nil {
		return report.Ignore{}, err
	}
	return ig, nil
}

// doctorFile is .doctor.yaml.
type doctorFile struct {
	// Ignores stay with the host: each with its reason, and optionally a
	// runner, a fingerprint and the date it expires.
	Ignores []fileIgnore `json:"ignores"`
}

type fileIgnore struct {
	Check       string    `json:"check"`
	Runner      runnerSel `json:"runner"`
	Fingerprint string    `json:"fingerprint"`
	Reason      string    `json:"reason"`
	Expires     string    `json:"expires"`
}

// runnerSel is a runner's index (a YAML number) or name (a string).
type runnerSel string

func (r *runnerSel) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*r = runnerSel(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("runner is a [[runners]] index or name")
	}
	*r = runnerSel(s)
	return nil
}

// loadDoctorFile reads the ignores of path, or of .doctor.yaml in the
// working directory when path is "" and that file exists. The file is read
// as every input is (hostio.ReadHostFile: a regular file of at most
// maxDoctorFile bytes, never blocking). The working directory's is read
// only when the invoker may trust it (trustDoctorFile); otherwise refused
// says why it was not, as an ignore not evaluated, and nothing of it is read.
// A file named with --config-file the operator chose: it is bounded alike,
// and honoured whoever owns it, as ssh -F honours the file it is given.
func loadDoctorFile(path string) (ignores []report.Ignore, refused *report.Ignore, err error) {
	flag := "--config-file "
	if path == "" {
		if _, err := os.Stat(DoctorFile); err != nil {
			return nil, nil, nil
		}
		path, flag = DoctorFile, ""
		if why := trustDoctorFile(path); why != nil {
			return nil, refusedDoctorFile(path, why), nil
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, usageError("%s%s: %v", flag, path, err)
	}
	b, err := hostio.ReadHostFile(abs, maxDoctorFile)
	if err != nil {
		return nil, nil, usageError("%s%v", flag, err)
	}
	var df doctorFile
	if err := yaml.UnmarshalStrict(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), &df); err != nil {
		return nil, nil, usageError("%s: %v (known keys: ignores: [{check, runner, fingerprint, reason, expires}])", path, err)
	}
	var out []report.Ignore
	for i, fi := range df.Ignores {
		where := fmt.Sprintf("%s: ignores[%d]", path, i)
		ig := report.Ignore{Check: strings.TrimSpace(fi.Check), Runner: strings.TrimSpace(string(fi.Runner)),
			Fingerprint: strings.TrimSpace(fi.Fingerprint), Reason: strings.TrimSpace(fi.Reason),
			Expires: strings.TrimSpace(fi.Expires), Source: path}
		switch {
		case ig.Check == "":
			return nil, nil, usageError("%s: check is required", where)
		case ig.Reason == "":
			return nil, nil, usageError("%s (%s): reason is required", where, ig.Check)
		case ig.Fingerprint != "" && !report.ValidFingerprint(ig.Fingerprint):
			return nil, nil, usageError("%s (%s): fingerprint %q: a fingerprint is %d hex digits, as -o wide or -o json shows it",
				where, ig.Check, ig.Fingerprint, report.FingerprintLen)
		}
		if err := validCheckIDs(where, []string{ig.Check}); err != nil {
			return nil, nil, err
		}
		if ig.Expires != "" {
			t, err := parseExpiry(ig.Expires)
			if err != nil {
				return nil, nil, usageError("%s (%s): expires %q: want a date, 2026-12-31, or RFC3339", where, ig.Check, ig.Expires)
			}
			ig.ExpiresAt = t
		}
		out = append(out, ig)
	}
	return out, nil, nil
}

// parseExpiry reads a date (it stops applying at 00:00 UTC of that day) or
// an RFC3339 time.
func parseExpiry(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, s)
}
