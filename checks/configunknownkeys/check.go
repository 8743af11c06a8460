// Package configunknownkeys reports config.toml keys the runner ignores.
package configunknownkeys

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/text/textdist"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

var Check = &checks.Check{
	ID:       "config-unknown-keys",
	Title:    "Every config.toml key is one the runner reads",
	Severity: checks.Warning,
	Doc: checks.Doc{
		Cause: "The runner decodes config.toml into its own types and never reports a key that matches no field: " +
			"a misspelt or invented key is dropped without a word, and the setting it was meant to change keeps " +
			"its default. run_untagged and tag_list are registration settings kept in GitLab, not config.toml " +
			"keys; image_pull_policy is not a field (the field is pull_policy). The nfs volume decodes itself with " +
			"exact-case lookups, so any other key under it is dropped too. A key set twice in spellings that differ " +
			"only in case (Executor and executor) decodes into one field, and which value wins changes from one start " +
			"to the next.",
		Symptom: "Nothing in the runner's log. Untagged jobs go to another runner although run_untagged = false is in the file, or images are pulled on every job although image_pull_policy = \"if-not-present\" is set.",
		Fix:     checks.Text("Rename the key to the one the runner reads, or set the value where it lives (GitLab's runner page for tags and run_untagged)."),
		Verify:  checks.Steps{checks.Sh("doctor run --only config-unknown-keys")},
		Patterns: []string{
			// commands/lint.go, v19.3.0: "%d unknown key(s) found in %s:\n%s", each line
			// fmt.Sprintf("  unknown key: %s", key). The runner itself says nothing.
			"unknown key(s) found in ",
			"  unknown key: ",
			// commands/register.go, v19.3.0 (ensureServerConfigArgsEmpty): --run-untagged, --tag-list
			// and the rest are GitLab's settings, refused or ignored at register, never config.toml keys.
			"Runner configuration other than name and executor configuration is reserved",
			"following command line parameters being ignored: --locked, --access-level, --run-untagged",
		},
	},
	// Not config-decode: a file with no [[runners]] (a [[runner]] typo) is
	// an error there, and its keys are exactly what this check names.
	Requires: []checks.Node{configfacts.ConfigFact, hostfacts.VersionFact},
	Run:      run,
}

// hints are the keys the guide itself gets wrong, with where the setting lives.
var hints = map[string]string{
	// With a glrt- token, register refuses --run-untagged and --tag-list:
	// "Runner configuration other than name and executor configuration is
	// reserved ... This configuration is specified on the GitLab server."
	// (commands/register.go, v19.3.0). GitLab's own default is true.
	"run_untagged":      "run_untagged is kept on the GitLab server, not in config.toml, so this line does not stop untagged jobs: GitLab's setting (default on) decides, and this runner takes them. Clear \"Run untagged jobs\" on the runner's page in GitLab (Settings > CI/CD > Runners > edit); registering with a glrt- token refuses its --run-untagged flag.",
	"tag_list":          "tag_list is kept on the GitLab server, not in config.toml: set the tags on the runner's page in GitLab (Settings > CI/CD > Runners > edit, \"Tags\"); registering with a glrt- token refuses its --tag-list flag.",
	"image_pull_policy": "image_pull_policy is not a runner field: the Kubernetes executor reads pull_policy (e.g. pull_policy = [\"if-not-present\"]).",
}

func run(p *checks.Pass) error {
	c := configfacts.ConfigFact.Get(p)
	if !c.Decoded() {
		// Only a file that was read can be said not to decode.
		if c.DecodeErr != nil {
			return checks.Skip("needs config-decode: config.toml did not decode")
		}
		return checks.Skip("needs config-decode: no config.toml was read")
	}
	caseDuplicates(p, c)
	ver := hostfacts.VersionFact.Get(p)
	var reported []string // paths reported: what lies below one is that one's
	for _, occ := range runnerconfig.Ignored(c.Data, c.Meta) {
		key := occ.Key
		if underFreeForm(key) {
			continue // the plugin receives these; the runner's decoder only does not look
		}
		if below(occ.Path, reported) {
			continue // a [[runner]] typo is one finding, not one per key in it
		}
		reported = append(reported, occ.Path)
		// doctor decodes with 19.2's types; a later runner reads more keys.
		since, read := readSince(ver, strings.Join(key, "."))
		if read {
			continue
		}
		last := key[len(key)-1]
		fix, known := hints[last]
		if !known {
			if s := Suggest(key); s != "" {
				fix = fmt.Sprintf("%s is not a field the runner reads; did you mean %s?", key, s)
			} else {
				fix = fmt.Sprintf("%s is not a field the runner reads: remove it, or move it to the table that has it.", key)
			}
		}
		src, line := c.Path, ""
		if occ.Line > 0 {
			src, line = fmt.Sprintf("%s:%d", c.Path, occ.Line), c.LineText(occ.Line)
		}
		ref := configfacts.RunnerOfPath(c, occ.Path)
		name := readable(occ.Path, key, ref)
		cause := fmt.Sprintf("The runner ignores %s: no field of its config has that key, so the setting has no effect.", name)
		if since != "" {
			cause = fmt.Sprintf("%s is read only from gitlab-runner %s on, and this runner is %s: it ignores the setting.", name, since, versionText(ver))
			fix = "Upgrade the runner to " + since + " or later, or remove " + name + "."
		}
		p.Report(checks.Finding{
			Runner:   ref,
			Cause:    cause,
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix:      checks.Text(fix),
		})
	}
	return nil
}

// below reports whether path lies inside one already reported: a table
// the runner ignores whole is one finding.
func below(path string, reported []string) bool {
	for _, r := range reported {
		if strings.HasPrefix(path, r+".") || strings.HasPrefix(path, r+"[") {
			return true
		}
	}
	return false
}

// readable names a key the way an operator counts runners: "run_untagged of
// [[runners]] #3 \"x\"", not the 0-based runners[2].run_untagged.
func readable(path string, key []string, ref *checks.RunnerRef) string {
	if ref == nil || len(key) < 2 {
		return path
	}
	_, rest, _ := strings.Cut(path, "]")
	return strings.TrimPrefix(rest, ".") + " of " + ref.String()
}

// readSince says whether the runner's own version reads a dotted key
// (known), and otherwise the first known version that does ("" for none).
func readSince(ver *hostfacts.Version, dotted string) (since string, known bool) {
	if ver.Err == nil {
		if keys, ok := runnerconfig.KeysFor(ver.Version.Version); ok && keys[dotted] {
			return "", true
		}
	}
	for _, v := range runnerconfig.KnownVersions() {
		if keys, ok := runnerconfig.KeysFor(v); ok && keys[dotted] {
			return v, false
		}
	}
	return "", false
}

func versionText(ver *hostfacts.Version) string {
	if ver.Err != nil {
		return "of a version doctor could not read (" + ver.Err.Error() + "), so an older one may be running"
	}
	return ver.Version.Version + " (" + ver.Source + ")"
}

// caseDuplicates reports a setting spelt twice in different case
// (Executor and executor): the decoder stores both into one field, and
// which one it keeps differs from one start to the next.
func caseDuplicates(p *checks.Pass, c *configfacts.ConfigFile) {
	for _, d := range c.Duplicates {
		var ev []checks.Evidence
		for _, n := range d.Lines {
			ev = append(ev, checks.Evidence{Source: fmt.Sprintf("%s:%d", c.Path, n), Detail: c.LineText(n)})
		}
		ref := configfacts.RunnerOfPath(c, d.Path)
		name := readable(d.Path, d.Key, ref)
		p.Report(checks.Finding{
			Runner: ref,
			Cause: fmt.Sprintf("%s is set %d times in spellings that differ only in case: the runner's decoder stores each into the "+
				"same field in the order it walks a Go map, so which value the runner uses can change at every start or reload.", name, len(d.Lines)),
			Evidence: ev,
			Fix:      checks.Text(fmt.Sprintf("Keep one %s, spelt %s, and remove the others.", name, d.Key[len(d.Key)-1])),
		})
	}
}

// underFreeForm tells keys inside a table the runner passes through whole
// (plugin_config, nesting_config): its decoder marks only their first level
// as read, though the plugin gets everything below.
func underFreeForm(key []string) bool {
	for _, k := range key[:len(key)-1] {
		if k == "plugin_config" || k == "nesting_config" {
			return true
		}
	}
	return false
}

// Suggest names the closest key the runner does read beside an unknown one
// (edit distance at most 3), e.g. pull_polcy -> pull_policy.
func Suggest(key []string) string {
	known := configfacts.KnownKeys(key[:len(key)-1])
	best, bestD := "", 4
	want := strings.ToLower(key[len(key)-1])
	for _, k := range known {
		if d := textdist.Levenshtein(want, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return strings.Join(append(append([]string{}, key[:len(key)-1]...), best), ".")
}
