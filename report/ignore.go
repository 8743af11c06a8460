package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// FingerprintLen is how many hex digits a fingerprint has.
const FingerprintLen = 12

// procPID is the part of an evidence source that changes when the runner
// restarts (/proc/4242/environ): it is not part of the finding's identity.
var procPID = regexp.MustCompile(`^/proc/[0-9]+/`)

// Fingerprint is a finding's stable identity among its check's findings:
// a hash of the check ID, the runner's index (or "host") and its evidence
// sources, sorted, with /proc/<pid>/ made pid-free. The wording of the cause
// and the evidence details do not enter it, so rewording a finding or a
// changed expiry date keeps its fingerprint; a config.toml line number in a
// source does enter it. Checks do not declare identities of their own yet:
// two findings of one check and runner with the same sources share one.
func Fingerprint(f checks.Finding) string {
	var sources []string
	seen := map[string]bool{}
	for _, e := range f.Evidence {
		s := procPID.ReplaceAllString(e.Source, "/proc/PID/")
		if !seen[s] {
			seen[s] = true
			sources = append(sources, s)
		}
	}
	sort.Strings(sources)
	runner := "host"
	if f.Runner != nil {
		runner = strconv.Itoa(f.Runner.Index)
	}
	h := sha256.New()
	for _, part := range append([]string{"doctor-finding-v1", f.Check, runner}, sources...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:FingerprintLen]
}

// ValidFingerprint says whether s has a fingerprint's shape.
func ValidFingerprint(s string) bool {
	if len(s) != FingerprintLen {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// MatchRunner says whether an ignore's runner selector names r: "" and "*"
// name every runner, a number its index in config.toml, anything else its
// name.
func MatchRunner(sel string, r *checks.RunnerRef) bool {
	if sel == "" || sel == "*" {
		return true
	}
	if r == nil {
		return false
	}
	if n, err := strconv.Atoi(sel); err == nil {
		return r.Index == n
	}
	return r.Name == sel
}

func (ig *Ignore) expired(now time.Time) bool {
	return !ig.ExpiresAt.IsZero() && !now.Before(ig.ExpiresAt)
}

func (ig *Ignore) hides(f checks.Finding, fingerprint string) bool {
	if f.Check != ig.Check {
		return false
	}
	if ig.Runner != "" && ig.Runner != "*" && !MatchRunner(ig.Runner, f.Runner) {
		return false
	}
	return ig.Fingerprint == "" || ig.Fingerprint == fingerprint
}

// applyIgnores returns the findings no ignore hides, in check order, and
// the ignores with their status. An expired ignore hides nothing.
func applyIgnores(res *checks.Result, ignores []Ignore, now time.Time) ([]checks.Finding, []Ignore) {
	out := make([]Ignore, len(ignores))
	copy(out, ignores)
	var kept []checks.Finding
	for _, cr := range res.Checks {
		for _, f := range cr.Findings {
			fp := Fingerprint(f)
			hidden := false
			for i := range out {
				if out[i].expired(now) || !out[i].hides(f, fp) {
					continue
				}
				out[i].Matched++
				hidden = true
			}
			if !hidden {
				kept = append(kept, f)
			}
		}
	}
	for i := range out {
		ig := &out[i]
		ig.Status, ig.Note = ignoreStatus(res, ig, now)
	}
	return kept, out
}

func ignoreStatus(res *checks.Result, ig *Ignore, now time.Time) (string, string) {
	if ig.expired(now) {
		return IgnoreExpired, fmt.Sprintf("expired %s: it hides nothing, so its findings are shown again; renew or remove it", ig.Expires)
	}
	if ig.Matched > 0 {
		return IgnoreMatched, ""
	}
	sel := ig.Runner
	if sel != "" && sel != "*" {
		named := false
		for _, r := range res.Runners {
			ref := r.Ref
			if MatchRunner(sel, &ref) {
				named = true
			}
		}
		if !named {
			note := fmt.Sprintf("no runner %q was diagnosed", sel)
			if len(res.Runners) > 0 {
				var have []string
				for _, r := range res.Runners {
					have = append(have, runnerTag(&r.Ref))
				}
				note += " (runners: " + strings.Join(have, ", ") + ")"
			}
			if ig.Source == "--ignore" {
				note += "; a reason that contains a colon needs the runner part: " + ig.Check + ":*:reason"
			}
			return IgnoreNotEvaluated, note
		}
	}
	var why []string
	for _, cr := range res.Checks {
		if cr.Check.ID != ig.Check {
			continue
		}
		if sel != "" && sel != "*" && cr.Runner != nil && !MatchRunner(sel, cr.Runner) {
			continue
		}
		if cr.Status == checks.StatusPass || cr.Status == checks.StatusFail {
			return IgnoreMatchedNothing, "its check ran and found nothing it names: remove it"
		}
		w := string(cr.Status)
		if cr.Reason != "" {
			w += ": " + cr.Reason
		}
		if cr.Runner != nil {
			w = runnerTag(cr.Runner) + " " + w
		}
		why = append(why, w)
	}
	if len(why) == 0 {
		return IgnoreNotEvaluated, ig.Check + " did not run (not selected)"
	}
	return IgnoreNotEvaluated, ig.Check + " did not run (" + strings.Join(why, "; ") + ")"
}
