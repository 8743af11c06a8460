package checks

import (
	"regexp"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

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

// code is shell, Caddyfile, unit, TOML or manifest text doctor wrote: its
// type is unexported, so a string constant converts to it and a string
// variable does not compile. A block built at run time, with a host's
// values, is a typed value of internal/fixcode (Script, Document).
type code string

// Say is a sentence step.
func Say(sentence string) Step { return Step{KindText, sentence} }

// Sh is a block of constant shell commands (a catalog fix: it reads the
// runner's values from shell variables, never from the host).
func Sh(commands code) Step { return Step{KindShell, string(commands)} }

// Caddy is a block of constant Caddyfile.
func Caddy(snippet code) Step { return Step{KindCaddyfile, string(snippet)} }

// Unit is a block of a constant systemd drop-in.
func Unit(dropIn code) Step { return Step{KindDropIn, string(dropIn)} }

// Toml is a block of constant config.toml lines.
func Toml(lines code) Step { return Step{KindTOML, string(lines)} }

// Yaml is a block of a constant Kubernetes manifest.
func Yaml(manifest code) Step { return Step{KindManifest, string(manifest)} }

// Script is a block of commands built at run time: every host value in it
// is one word (fixcode). A script its encoder refuses (a NUL, a value
// that looks like a secret) is no block but a sentence that says why.
func Script(s fixcode.Script) Step {
	text, err := s.Render()
	if err != nil {
		return Withheld(err)
	}
	return Step{KindShell, text}
}

// Commands is Script of one command a line.
func Commands(cmds ...fixcode.Cmd) Step { return Script(fixcode.Commands(cmds...)) }

// Document is a block of a document an encoder rendered: a drop-in, a
// TOML fragment, a manifest. One its encoder refused is a sentence.
func Document(d fixcode.Doc) Step {
	text, err := d.Text()
	if err != nil {
		return Withheld(err)
	}
	kind := map[fixcode.Lang]Kind{fixcode.LangSystemd: KindDropIn, fixcode.LangTOML: KindTOML, fixcode.LangManifest: KindManifest}[d.Lang()]
	return Step{kind, text}
}

// Withheld is the sentence that stands where a block could not be
// printed: why, never the value (it may be a secret).
func Withheld(err error) Step {
	return Say("doctor prints no command here: " + err.Error() + ".")
}

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
// (and --stdin is systemd v256+). A unit name that is not one (systemd's
// rules) gets no command.
func DropIn(unit, file string, lines fixcode.Doc) Steps {
	if err := fixcode.UnitName(unit); err != nil {
		return Steps{Withheld(err)}
	}
	if !dropInFile.MatchString(file) {
		panic("checks: drop-in file name " + file)
	}
	dir := "/etc/systemd/system/" + unit + ".d"
	return Steps{
		Say("The drop-in " + dir + "/" + file + ":"),
		Document(lines),
		Say("Write it and restart the runner:"),
		Script(fixcode.Commands(
			fixcode.Command("sudo", "mkdir", "-p", dir),
			fixcode.Command("sudo", "tee", dir+"/"+file).Quiet().Stdin(lines),
			fixcode.Command("sudo", "systemctl", "daemon-reload"),
			fixcode.Command("sudo", "systemctl", "restart", unit))),
	}
}

// dropInFile is a drop-in's file name doctor writes: systemd reads only
// *.conf.
var dropInFile = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*\.conf$`)
