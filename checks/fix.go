package checks

import "strings"

// Kind is what a fix step's text is: a sentence an operator reads, or a
// block of one language that is pasted whole where that language goes. The
// kinds are the places an operator pastes into; every block of every fix is
// validated by the tool of its kind (checks/fixproof).
type Kind string

const (
	// KindText is a sentence: read, never pasted.
	KindText Kind = "text"
	// KindShell is commands for bash, one or more lines, heredocs at column 0.
	KindShell Kind = "shell"
	// KindCaddyfile is a snippet of a site block of the front's Caddyfile.
	KindCaddyfile Kind = "caddyfile"
	// KindDropIn is a systemd unit drop-in (a [Service] section and its lines).
	KindDropIn Kind = "systemd"
	// KindTOML is lines of the runner's config.toml.
	KindTOML Kind = "toml"
	// KindManifest is a Kubernetes manifest (YAML).
	KindManifest Kind = "yaml"
)

// Step is one step of a fix: a sentence, or a block of one Kind. A block's
// text is exactly what is pasted (its lines at column 0); a renderer may
// indent or fence it, never rewrap it.
type Step struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text"`
}

// Steps is a fix, or a verification: its steps in order. It is the one
// type of every fix doctor prints, the catalog's (Doc.Fix, Doc.Verify) and
// the ones checks build at run time with a run's facts.
type Steps []Step

// Say is a sentence step.
func Say(sentence string) Step { return Step{KindText, sentence} }

// Sh is a block of shell commands.
func Sh(commands string) Step { return Step{KindShell, commands} }

// Caddy is a block of Caddyfile.
func Caddy(snippet string) Step { return Step{KindCaddyfile, snippet} }

// Unit is a block of a systemd drop-in.
func Unit(dropIn string) Step { return Step{KindDropIn, dropIn} }

// Toml is a block of config.toml.
func Toml(lines string) Step { return Step{KindTOML, lines} }

// Yaml is a block of Kubernetes manifest.
func Yaml(manifest string) Step { return Step{KindManifest, manifest} }

// Text is a fix of one sentence.
func Text(sentence string) Steps {
	if sentence == "" {
		return nil
	}
	return Steps{Say(sentence)}
}

// String is the fix as plain text: every step's text on lines of its own,
// blocks as they are pasted. It is the JSON's "fix" of schema 2, kept for
// the consumers that read it.
func (s Steps) String() string {
	parts := make([]string, 0, len(s))
	for _, st := range s {
		parts = append(parts, strings.TrimRight(st.Text, "\n"))
	}
	return strings.Join(parts, "\n")
}

// Blocks are the steps that are pasted: every step but the sentences.
func (s Steps) Blocks() Steps {
	var out Steps
	for _, st := range s {
		if st.Kind != KindText {
			out = append(out, st)
		}
	}
	return out
}

// Equal reports whether s and t are the same steps.
func (s Steps) Equal(t Steps) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// Map returns s with every step's text passed through f (redaction).
func (s Steps) Map(f func(string) string) Steps {
	if s == nil {
		return nil
	}
	out := make(Steps, len(s))
	for i, st := range s {
		out[i] = Step{st.Kind, f(st.Text)}
	}
	return out
}

// Quote quotes s as one word for a POSIX shell when it needs it: a path or
// a name from the host goes into a command whole, whatever it holds.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// The catalog's fixes (Doc.Fix, Doc.Verify: doctor explain, doctor why)
// name no host's values: a command that talks to the runner's cluster or
// touches the runner reads them from shell variables that TargetVars, their
// first step, sets to the usual values. Pasted as they are, they still act
// on the runner's cluster, never on the shell's current context. A run's
// own fixes carry the values doctor found.
const (
	// CatalogKubectl is kubectl aimed at the runner's cluster.
	CatalogKubectl = `KUBECONFIG="$RUNNER_KUBECONFIG" kubectl --context "$RUNNER_CONTEXT"`
	// CatalogNamespace is the runner's namespace as a shell word.
	CatalogNamespace = `"$RUNNER_NAMESPACE"`
)

// TargetSay and TargetVars are the catalog's first steps: what the
// variables hold, and the usual values, which an operator corrects.
var (
	TargetSay = Say("Set these to the runner's own values first (doctor run prints every fix with them filled in): " +
		"the kubeconfig its process loads (its KUBECONFIG), the context it uses ([runners.kubernetes] context, else " +
		"the file's current-context), its namespace, its systemd unit, its config.toml, and the user it runs as.")
	TargetVars = Sh("export RUNNER_KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml\n" +
		"export RUNNER_CONTEXT=default\n" +
		"export RUNNER_NAMESPACE=gitlab-runner\n" +
		"export RUNNER_UNIT=gitlab-runner.service\n" +
		"export RUNNER_CONFIG=/etc/gitlab-runner/config.toml\n" +
		"export RUNNER_USER=gitlab-runner")
)

// Target is a catalog fix or verify that names the runner's cluster or
// service: TargetSay, TargetVars, then steps.
func Target(steps ...Step) Steps { return append(Steps{TargetSay, TargetVars}, steps...) }

// DropIn is the steps that give a systemd unit a drop-in: its lines, then
// the commands that write it as /etc/systemd/system/UNIT.d/FILE and restart
// the unit. Written with tee, not `systemctl edit`: that opens an editor
// (and --stdin is systemd v256+).
func DropIn(unit, file, lines string) Steps {
	dir := "/etc/systemd/system/" + unit + ".d"
	return Steps{
		Say("The drop-in " + dir + "/" + file + ":"),
		Unit(lines),
		Say("Write it and restart the runner:"),
		Sh("sudo mkdir -p " + Quote(dir) + "\n" +
			"sudo tee " + Quote(dir+"/"+file) + " >/dev/null <<'EOF'\n" + lines + "\nEOF\n" +
			"sudo systemctl daemon-reload\n" +
			"sudo systemctl restart " + Quote(unit)),
	}
}

// EnvironmentLine is a unit's Environment= line setting name to value, in
// systemd's quoting: a value with a space or a quote is one quoted word, and
// % is doubled (a specifier otherwise).
func EnvironmentLine(name, value string) string {
	assign := name + "=" + strings.ReplaceAll(value, "%", "%%")
	if strings.ContainsAny(assign, " \t\"'\\") {
		assign = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(assign) + `"`
	}
	return "Environment=" + assign
}
