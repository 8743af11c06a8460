// Package fixproof proves that a fix works when pasted: every block of a
// fix is handed to the tool of its kind, the one that reads it where the
// operator pastes it.
//
//   - shell: `bash -n` (a warning fails too: an unclosed heredoc only
//     warns) and shellcheck (Debian's package; errors and warnings fail),
//     and no <placeholder> word, which bash parses as a redirection.
//   - caddyfile: `caddy adapt` (the Caddy scripts/build-tools.sh builds),
//     the snippet placed in a site block as the operator places it:
//     "kcp.example.invalid {", the snippet, "}"; {$KCP_UPSTREAM}, the
//     placeholder of the upstream a fix cannot know, set to a loopback URL.
//   - systemd: `systemd-analyze verify` of a stub gitlab-runner.service with
//     the block as its drop-in; any line it prints fails (it exits 0 on
//     "Invalid environment assignment").
//   - toml: the runner's decoder (runnerconfig.Decode, Undecoded, Refusals),
//     the block as config.toml's global section or inside a [[runners]]
//     entry, where it is pasted.
//   - yaml: a Kubernetes manifest; with a kubeconfig (Checker.Kubeconfig,
//     the integration tests' apiserver) `kubectl apply --dry-run=server`,
//     else decoded as objects that have apiVersion, kind and a name. The
//     manifest of a shell block's `kubectl apply -f - <<'EOF'` is one too.
package fixproof

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// Checker validates blocks. The zero value validates without a cluster.
type Checker struct {
	// Kubeconfig, when set, is an admin kubeconfig of a test apiserver:
	// manifests are applied to it with --dry-run=server.
	Kubeconfig string
}

// results caches each block's verdict: the scenarios render the same fix
// many times, and a tool run costs tens of milliseconds.
var results sync.Map // key → error (nil stored as errOK)

var errOK = errors.New("ok")

// Step validates one step: nil for a sentence, or for a block its tool
// accepts; else what the tool said.
func (c Checker) Step(s checks.Step) error {
	if s.Kind == checks.KindText {
		return nil
	}
	return cached(string(s.Kind)+"\x00"+c.Kubeconfig, s.Text, func(string) error { return c.validate(s) })
}

func (c Checker) validate(s checks.Step) error {
	switch s.Kind {
	case checks.KindShell:
		if err := ShellBlock(s.Text); err != nil {
			return err
		}
		// A manifest a command applies from a heredoc is a manifest too.
		for _, m := range heredocManifests(s.Text) {
			if err := c.Manifest(m); err != nil {
				return fmt.Errorf("the manifest of its heredoc: %w", err)
			}
		}
		return nil
	case checks.KindCaddyfile:
		return Caddyfile(s.Text)
	case checks.KindDropIn:
		return DropIn(s.Text)
	case checks.KindTOML:
		return TOML(s.Text)
	case checks.KindManifest:
		return c.Manifest(s.Text)
	}
	return fmt.Errorf("a block of unknown kind %q", s.Kind)
}

// heredocStart is a line that opens a quoted heredoc: <<'EOF'.
var heredocStart = regexp.MustCompile(`<<'([A-Za-z0-9_]+)'`)

// heredocManifests are the bodies of the block's heredocs that are
// Kubernetes manifests (kubectl apply -f - <<'EOF' …), as a shell parser
// reads them (testkit/shellshape): whatever delimiter the
// encoder chose.
func heredocManifests(block string) []string {
	shape, err := shellshape.Parse(block)
	if err != nil {
		return nil // ShellBlock reports it
	}
	var out []string
	for _, body := range shape.Heredocs {
		if manifestBody.MatchString(body) {
			out = append(out, body)
		}
	}
	return out
}

// manifestBody is a document with a top-level apiVersion.
var manifestBody = regexp.MustCompile(`(?m)^apiVersion: `)

// errMissingTool is a tool this machine lacks.
var errMissingTool = errors.New("tool missing")

// Assert fails t for every block of steps its tool refuses. A tool this
// machine lacks fails under DOCTOR_REQUIRE_TOOLS=1 (scripts/test-all.sh
// installs them all) and is logged otherwise.
func (c Checker) Assert(t testing.TB, where string, steps checks.Steps) {
	t.Helper()
	var script []string
	for i, s := range steps {
		c.report(t, fmt.Sprintf("%s: step %d, a %s block,", where, i+1, s.Kind), s.Text, c.Step(s))
		if s.Kind == checks.KindShell {
			script = append(script, s.Text)
		}
		if s.Kind == checks.KindText {
			if cmd := commandInProse(s.Text); cmd != "" {
				t.Errorf("%s: step %d is a sentence with a command in it (%q): a command is a block of its own\n%s", where, i+1, cmd, s.Text)
			}
		}
	}
	if len(script) > 0 {
		text := strings.Join(script, "\n")
		c.report(t, where+": its shell blocks, pasted in order,", text, cached("shellcheck", text, Shellcheck))
	}
}

// cached runs check once per kind and text.
func cached(kind, text string, check func(string) error) error {
	sum := sha256.Sum256([]byte(kind + "\x00" + text))
	if v, ok := results.Load(sum); ok {
		if v == errOK {
			return nil
		}
		return v.(error)
	}
	err := check(text)
	if err == nil {
		results.Store(sum, errOK)
	} else if !errors.Is(err, errMissingTool) {
		results.Store(sum, err)
	}
	return err
}

func (c Checker) report(t testing.TB, what, text string, err error) {
	t.Helper()
	switch {
	case err == nil:
	case errors.Is(err, errMissingTool):
		if tools.Required() {
			t.Errorf("%s not validated: %v", what, err)
		} else {
			t.Logf("%s not validated: %v", what, err)
		}
	default:
		t.Errorf("%s does not paste: %v\n%s", what, err, text)
	}
}

// AssertReport asserts every fix of rep's findings.
func (c Checker) AssertReport(t testing.TB, where string, rep *report.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		c.Assert(t, where+": "+f.Check+" fix", f.FixSteps)
	}
}

// proseCommand finds the start of a command written inside a sentence:
// those an operator would paste. A sentence may name a command's word
// ("kubectl exec succeeds"), never give a command line to run.
var proseCommand = regexp.MustCompile("(?:^|[\\s(`:;])((?:sudo|kubectl|systemctl|journalctl|d8 k|gitlab-runner (?:register|run|fleeting|verify|install)|curl|chmod|chown|install -m|docker run|usermod|timedatectl|chronyc) [a-z-][^\\s]*)")

// commandInProse is the first command line in a sentence, or "".
func commandInProse(s string) string {
	if m := proseCommand.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func tool(name string) (string, error) {
	// Where scripts/build-tools.sh puts caddy and kubectl (the versions
	// the tests pin), as testenv (integration-only) finds them:
	// $DOCTOR_TOOLS, else its default; then PATH.
	dir := os.Getenv("DOCTOR_TOOLS")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "doctor-tools")
	}
	p := filepath.Join(dir, "bin", name)
	if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s (scripts/test-all.sh installs it; caddy and kubectl come from scripts/build-tools.sh)", errMissingTool, name)
}

func tempFile(name, text string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "fixproof")
	if err != nil {
		return "", nil, err
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return p, func() { os.RemoveAll(dir) }, nil
}

// placeholder is a <word> bash would read as a redirection: "<pod>",
// "<a running pod>". A heredoc (<<) and a process substitution are not.
var placeholder = regexp.MustCompile(`(^|[^<])<[A-Za-z][^<>\n]*>`)

// Shell validates a block of shell commands on its own: ShellBlock, then
// Shellcheck.
func Shell(text string) error {
	if err := ShellBlock(text); err != nil {
		return err
	}
	return Shellcheck(text)
}

// ShellBlock validates what each block must be alone: no placeholder, no
// sentence's punctuation, and `bash -n`.
func ShellBlock(text string) error {
	if m := placeholder.FindString(text); m != "" {
		return fmt.Errorf("%q is a placeholder: bash parses it as a redirection", strings.TrimLeft(m, " "))
	}
	delim := ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case delim != "":
			if l == delim {
				delim = "" // a heredoc's body is a document, not a command
			}
		case strings.HasSuffix(l, ".") || strings.HasSuffix(l, ","):
			return fmt.Errorf("line %q ends with a sentence's punctuation, which becomes part of the last argument", l)
		default:
			if m := heredocStart.FindStringSubmatch(l); m != nil {
				delim = m[1]
			}
		}
	}
	if _, err := shellshape.Parse(text); err != nil {
		return fmt.Errorf("a shell parser (mvdan.cc/sh, bash dialect) refuses it: %v", err)
	}
	f, done, err := tempFile("block.sh", text+"\n")
	if err != nil {
		return err
	}
	defer done()
	bash, err := tool("bash")
	if err != nil {
		return err
	}
	out, err := exec.Command(bash, "-n", f).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		return fmt.Errorf("bash -n: %v: %s", err, out)
	}
	return nil
}

// Shellcheck runs shellcheck on a script: a fix's shell blocks in order,
// as they are pasted into one shell (a first block sets variables the
// next ones use).
func Shellcheck(text string) error {
	f, done, err := tempFile("fix.sh", text+"\n")
	if err != nil {
		return err
	}
	defer done()
	sc, err := tool("shellcheck")
	if err != nil {
		return err
	}
	// Errors and warnings fail, and SC2024, a note: "sudo doesn't affect
	// redirects" is a paste that reads the file as the operator.
	out, _ := exec.Command(sc, "-s", "bash", "-S", "info", "-f", "gcc", f).CombinedOutput()
	var bad []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(l, ": error: ") || strings.Contains(l, ": warning: ") || strings.Contains(l, "[SC2024]") {
			bad = append(bad, strings.TrimPrefix(l, f+":"))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("shellcheck: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Upstream is what {$KCP_UPSTREAM} stands for when a snippet is adapted.
const Upstream = "https://127.0.0.1:6443"

// Caddyfile validates a snippet of the kcp site block.
func Caddyfile(text string) error {
	caddy, err := tool("caddy")
	if err != nil {
		return err
	}
	f, done, err := tempFile("Caddyfile", "kcp.example.invalid {\n\t"+strings.ReplaceAll(text, "\n", "\n\t")+"\n}\n")
	if err != nil {
		return err
	}
	defer done()
	cmd := exec.Command(caddy, "adapt", "--config", f, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "KCP_UPSTREAM="+Upstream, "HOME="+filepath.Dir(f), "XDG_DATA_HOME="+filepath.Dir(f), "XDG_CONFIG_HOME="+filepath.Dir(f))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("caddy adapt: %v: %s", err, lastLine(stderr.String()))
	}
	if strings.Contains(stderr.String(), `"level":"warn"`) {
		return fmt.Errorf("caddy adapt warns: %s", lastLine(stderr.String()))
	}
	return nil
}

// DropIn validates a systemd drop-in, on a stub gitlab-runner.service.
func DropIn(text string) error {
	sa, err := tool("systemd-analyze")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "fixproof")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	unit := filepath.Join(dir, "gitlab-runner.service")
	if err := os.WriteFile(unit, []byte("[Unit]\nDescription=stub\n[Service]\nExecStart=/bin/true\n"), 0o644); err != nil {
		return err
	}
	if err := os.Mkdir(unit+".d", 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(unit+".d", "fix.conf"), []byte(text+"\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(sa, "verify", "--man=no", "--generators=no", unit)
	cmd.Env = append(os.Environ(), "SYSTEMD_UNIT_PATH="+dir+":", "SYSTEMD_LOG_COLOR=0", "SYSTEMD_PAGER=")
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		return fmt.Errorf("systemd-analyze verify: %v: %s", err, out)
	}
	return nil
}

// runnerEntry is the [[runners]] entry a TOML block is pasted into.
const runnerEntry = "[[runners]]\nname = \"fixproof\"\nurl = \"https://gitlab.example.invalid/\"\ntoken = \"glrt-fixproof\"\nexecutor = \"kubernetes\"\n"

// TOML validates lines of config.toml: they decode as the runner decodes
// them, every key read, nothing refused, either as the global section or
// inside a [[runners]] entry.
func TOML(text string) error {
	if m := placeholder.FindString(text); m != "" {
		return fmt.Errorf("%q is a placeholder the runner would take literally", strings.TrimLeft(m, " "))
	}
	errGlobal := decodes(text + "\n" + runnerEntry)
	if errGlobal == nil {
		return nil
	}
	errRunner := decodes(runnerEntry + text + "\n")
	if errRunner == nil {
		return nil
	}
	return fmt.Errorf("as the global section: %v; inside [[runners]]: %v", errGlobal, errRunner)
}

func decodes(doc string) error {
	cfg, md, err := runnerconfig.Decode([]byte(doc))
	if err != nil {
		return errors.New(runnerconfig.FatalLine(runnerconfig.LoadError(err)))
	}
	for _, o := range runnerconfig.Undecoded([]byte(doc), md) {
		return fmt.Errorf("the runner does not read %v (line %d)", o.Key, o.Line)
	}
	for _, r := range runnerconfig.Refusals(cfg) {
		return fmt.Errorf("the runner refuses %s: %s", r.Path, r.Message)
	}
	return nil
}

// Manifest validates a Kubernetes manifest.
func (c Checker) Manifest(text string) error {
	if c.Kubeconfig != "" {
		kubectl, err := tool("kubectl")
		if err != nil {
			return err
		}
		cmd := exec.Command(kubectl, "--kubeconfig", c.Kubeconfig, "apply", "--dry-run=server", "-f", "-")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl apply --dry-run=server: %v: %s", err, out)
		}
		return nil
	}
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	n := 0
	for {
		var u unstructured.Unstructured
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("not YAML: %v", err)
		}
		if u.Object == nil {
			continue
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return fmt.Errorf("an object without apiVersion, kind or metadata.name: %v", u.Object)
		}
		n++
	}
	if n == 0 {
		return errors.New("no object")
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
