package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/testing/testpki"
	"github.com/socialwebcomputer/doctor/report"
)

var update = flag.Bool("update", false, "rewrite the golden outputs of testdata/fixtures/*/golden")

const fixtures = "../../testdata/fixtures"

// Scenario is testdata/fixtures/<name>/scenario.json: how to lay the root
// out (modes git cannot carry, certificates minted now) and what the report
// must say.
type Scenario struct {
	Description string   `json:"description"`
	Now         string   `json:"now"`
	Args        []string `json:"args"`
	Setup       struct {
		// Modes are octal permission bits by root-relative path.
		Modes map[string]string `json:"modes"`
		// Owners are uid:gid by root-relative path (the tests run as root).
		Owners      map[string]string `json:"owners"`
		Kubeconfigs []KubeconfigSpec  `json:"kubeconfigs"`
		// Files are written as given (content that must not sit in git, like
		// a 10 MiB file) by root-relative path; "size:N" makes N bytes.
		Files map[string]string `json:"files"`
		// Symlinks are link -> target, by root-relative path.
		Symlinks map[string]string `json:"symlinks"`
		// Sockets are unix socket files, by root-relative path, that nothing
		// listens on (git cannot carry a socket): what a stopped daemon
		// leaves. Modes and owners apply to them afterwards.
		Sockets []string `json:"sockets"`
		// Mtimes set modification times, a Go duration relative to Now
		// ("-2h"), by root-relative path: git keeps none.
		Mtimes map[string]string `json:"mtimes"`
		// SSHKeys mint ed25519 keys at test time (no key sits in git), by
		// root-relative path: "ed25519" writes the private key there,
		// "public" only its authorized_keys line. The seed is the path, so
		// a golden's fingerprint stays put.
		SSHKeys map[string]string `json:"sshKeys"`
	} `json:"setup"`
	Want Want `json:"want"`
}

// KubeconfigSpec mints a CA and a client certificate relative to Now.
type KubeconfigSpec struct {
	Path      string   `json:"path"`
	Server    string   `json:"server"`
	CN        string   `json:"cn"`
	Groups    []string `json:"groups"`
	NotBefore string   `json:"notBefore"` // a Go duration relative to now, e.g. "-1h"
	NotAfter  string   `json:"notAfter"`
	Mode      string   `json:"mode"`
	// OmitCurrentContext drops current-context, as a hand-edited file might.
	OmitCurrentContext bool `json:"omitCurrentContext"`
}

// Want is what the report must say.
type Want struct {
	Exit int    `json:"exit"`
	Top  string `json:"top"` // findings[0].check
	// TopRunner is the index of the runner findings[0] names ("for the
	// right runner"); 0 means not asserted.
	TopRunner int               `json:"topRunner"`
	Findings  []string          `json:"findings"` // checks that must have a finding
	Absent    []string          `json:"absent"`   // checks that must have none
	CausedBy  map[string]string `json:"causedBy"` // check -> the check it folds under
	Status    map[string]string `json:"status"`   // check -> pass|fail|unknown|skipped
	// Says lists text each check's findings must carry (cause, evidence or
	// fix), so a scenario pins the words an operator reads, not only the ID.
	Says map[string][]string `json:"says"`
	// Reason is text the check's unknown or skipped reason must contain.
	Reason map[string]string `json:"reason"`
}

func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(fixtures, "*", "scenario.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios under %s: %v", fixtures, err)
	}
	for _, sj := range dirs {
		dir := filepath.Dir(sj)
		t.Run(filepath.Base(dir), func(t *testing.T) { runScenario(t, dir) })
	}
}

func runScenario(t *testing.T, dir string) {
	var sc Scenario
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatalf("scenario.json: %v", err)
	}
	root := LayRoot(t, dir, &sc)
	base := []string{"run", "--root", root, "--now", sc.Now}
	for _, a := range sc.Args {
		// $FIXTURE is the fixture's directory, for files beside root/
		// (a .doctor.yaml).
		base = append(base, strings.ReplaceAll(a, "$FIXTURE", dir))
	}

	// The table goes to no terminal here: report.DefaultWidth columns, no
	// locale, so ASCII glyphs. The width goldens are the same run on a
	// UTF-8 terminal of 80 and of 200 columns.
	outputs := map[string]string{}
	type variant struct {
		format string
		io     IO
	}
	noEnv := func(string) string { return "" }
	utf8 := func(k string) string {
		if k == "LANG" {
			return "C.UTF-8"
		}
		return ""
	}
	variants := map[string]variant{
		"report.json": {"json", IO{Getenv: noEnv}},
		"table.txt":   {"table", IO{Getenv: noEnv}},
		"report.md":   {"markdown", IO{Getenv: noEnv}},
	}
	if widthGoldens[filepath.Base(dir)] {
		variants["table-80.txt"] = variant{"table", IO{Getenv: utf8, Width: 80}}
		variants["table-200.txt"] = variant{"table", IO{Getenv: utf8, Width: 200}}
	}
	for name, v := range variants {
		var out, errb bytes.Buffer
		v.io.Out, v.io.Err = &out, &errb
		code := Main(append(append([]string{}, base...), "-o", v.format), v.io)
		if code != sc.Want.Exit {
			t.Errorf("%s (-o %s, width %d): exit %d, want %d; stderr: %s", name, v.format, v.io.Width, code, sc.Want.Exit, errb.String())
		}
		// A verify command names --root: the temporary one is $ROOT.
		outputs[name] = strings.ReplaceAll(Normalize(out.String()), root, "$ROOT")
	}
	if out, ok := outputs["table-80.txt"]; ok {
		assertFits(t, out, 80)
	}
	if out, ok := outputs["table-200.txt"]; ok {
		assertFits(t, out, 200)
	}

	var rep report.Report
	if err := json.Unmarshal([]byte(outputs["report.json"]), &rep); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, outputs["report.json"])
	}
	AssertWant(t, &rep, sc.Want)
	AssertNoSecrets(t, outputs)
	AssertNoGuideHosts(t, &rep)

	for name := range outputs {
		golden := filepath.Join(dir, "golden", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(outputs[name]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/cli -run TestScenarios -update)", err)
		}
		if string(want) != outputs[name] {
			t.Errorf("%s differs from the golden file; if the change is meant, run with -update.\n--- got ---\n%s", golden, outputs[name])
		}
	}
}

// widthGoldens are the fixtures whose table is also kept at 80 and 200
// columns (golden/table-80.txt, table-200.txt): one healthy, one root cause
// with its consequence, two root causes, a long multi-line fix, several
// runners, ignores from a .doctor.yaml.
var widthGoldens = map[string]bool{
	"healthy":      true,
	"cert-expired": true,
	"multi-cause-expired-cert-world-readable": true,
	"guide-config-as-is":                      true,
	"three-runners":                           true,
	"doctor-yaml-expired-ignore":              true,
}

// assertFits fails when a line of a table is wider than the terminal,
// except the fix and verify lines, which are printed whole for the
// terminal to wrap, and a line that is one token too long to break.
func assertFits(t *testing.T, table string, width int) {
	t.Helper()
	fix := false
	for _, line := range strings.Split(table, "\n") {
		switch {
		case strings.HasPrefix(line, "# ") && strings.HasSuffix(line, ": fix"), line == "# verify":
			fix = true
			continue
		case line == "":
			fix = false
			continue
		}
		if fix || utf8.RuneCountInString(line) <= width {
			continue
		}
		if f := strings.Fields(line); len(f) == 1 {
			continue
		}
		t.Errorf("line of %d columns in a %d-column table: %q", utf8.RuneCountInString(line), width, line)
	}
}

// guideHosts are the example hosts of the runner-gateway-cluster guide: a
// finding names this host's values, never the guide's.
var guideHosts = []string{"gitlab.dorper-matrix.ts.net", "dorper-matrix"}

// AssertNoGuideHosts fails when a finding quotes one of the guide's
// example hosts.
func AssertNoGuideHosts(t *testing.T, rep *report.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		text := f.Cause + "\n" + f.Fix
		for _, e := range f.Evidence {
			text += "\n" + e.Source + ": " + e.Detail
		}
		for _, h := range guideHosts {
			if strings.Contains(text, h) {
				t.Errorf("%s's finding quotes the guide's example host %q:\n%s", f.Check, h, text)
			}
		}
	}
}

// AssertWant checks the ranking and statuses a scenario names.
func AssertWant(t *testing.T, rep *report.Report, w Want) {
	t.Helper()
	have := map[string]*report.Finding{}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if have[f.Check] == nil {
			have[f.Check] = f
		}
	}
	if rep.Summary.ExitCode != w.Exit {
		t.Errorf("exit code %d, want %d", rep.Summary.ExitCode, w.Exit)
	}
	if w.Top != "" {
		if len(rep.Findings) == 0 || rep.Findings[0].Check != w.Top {
			t.Errorf("top finding is %s, want %s", topOf(rep), w.Top)
		}
	}
	if w.TopRunner != 0 {
		if len(rep.Findings) == 0 || rep.Findings[0].Runner == nil || rep.Findings[0].Runner.Index != w.TopRunner {
			t.Errorf("top finding %s is for runner %v, want [[runners]] #%d", topOf(rep), runnerOf(rep), w.TopRunner)
		}
	}
	if w.Top == "" && len(w.Findings) == 0 {
		for _, f := range rep.Findings {
			if f.Severity >= checks.Warning {
				t.Errorf("want no finding of warning or worse, got %s %s: %s", f.Severity, f.Check, f.Cause)
			}
		}
	}
	for _, c := range w.Findings {
		if have[c] == nil {
			t.Errorf("want a finding from %s; findings: %s", c, checksOf(rep))
		}
	}
	for _, c := range w.Absent {
		if have[c] != nil {
			t.Errorf("want no finding from %s, got: %s", c, have[c].Cause)
		}
	}
	for c, by := range w.CausedBy {
		f := have[c]
		if f == nil {
			t.Errorf("want %s folded under %s, but it has no finding", c, by)
			continue
		}
		if got := deref(f.CausedBy); got != by {
			t.Errorf("%s causedBy %q, want %q", c, got, by)
		}
	}
	status := map[string]string{}
	for _, c := range rep.Checks {
		status[c.ID] = string(c.Status)
	}
	for c, s := range w.Status {
		if status[c] != s {
			t.Errorf("check %s is %q, want %q", c, status[c], s)
		}
	}
	reason := map[string]string{}
	for _, c := range rep.Checks {
		reason[c.ID] = c.Reason
	}
	for c, want := range w.Reason {
		if !strings.Contains(reason[c], want) {
			t.Errorf("check %s reason is %q, want it to contain %q", c, reason[c], want)
		}
	}
	for c, texts := range w.Says {
		var all strings.Builder
		for _, f := range rep.Findings {
			if f.Check != c {
				continue
			}
			fmt.Fprintf(&all, "%s\n%s\n", f.Cause, f.Fix)
			for _, e := range f.Evidence {
				fmt.Fprintf(&all, "%s: %s\n", e.Source, e.Detail)
			}
		}
		for _, want := range texts {
			if !strings.Contains(all.String(), want) {
				t.Errorf("%s's findings do not say %q; they say:\n%s", c, want, all.String())
			}
		}
	}
}

// secretShapes are what must never leave doctor in any format.
var secretShapes = regexp.MustCompile(`-----BEGIN|glrt-[A-Za-z0-9_-]{6,}|(?i)bearer [A-Za-z0-9._-]{10,}|[A-Za-z0-9+/]{80,}`)

// AssertNoSecrets fails when any output carries a PEM block, a runner token,
// a bearer token or a long base64 run (key bytes).
func AssertNoSecrets(t *testing.T, outputs map[string]string) {
	t.Helper()
	for format, out := range outputs {
		if m := secretShapes.FindString(out); m != "" {
			t.Errorf("-o %s output carries a secret-shaped string: %.40q", format, m)
		}
	}
}

var durationField = regexp.MustCompile(`("durationMs": )\d+|\((\d+)ms\)`)

// Normalize zeroes wall-clock durations, the only part of a report that
// --now does not fix.
func Normalize(s string) string {
	return durationField.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "(") {
			return "(0ms)"
		}
		return `"durationMs": 0`
	})
}

// LayRoot copies <dir>/root into a temporary root, normalises modes (git
// carries only the exec bit, and umasks differ), then applies the
// scenario's setup: modes, owners, files, symlinks and minted kubeconfigs.
func LayRoot(t *testing.T, dir string, sc *Scenario) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	src := filepath.Join(dir, "root")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse(time.RFC3339, sc.Now)
	if err != nil {
		t.Fatalf("scenario now %q: %v", sc.Now, err)
	}
	for _, k := range sc.Setup.Kubeconfigs {
		writeKubeconfig(t, root, now, k)
	}
	for rel, kind := range sc.Setup.SSHKeys {
		writeSSHKey(t, root, rel, kind)
	}
	for rel, content := range sc.Setup.Files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte(content)
		if n, ok := strings.CutPrefix(content, "size:"); ok {
			size, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("files[%s]: %v", rel, err)
			}
			data = bytes.Repeat([]byte("x"), size)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range sc.Setup.Symlinks {
		p := filepath.Join(root, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range sc.Setup.Sockets {
		makeSocket(t, filepath.Join(root, rel))
	}
	for rel, m := range sc.Setup.Modes {
		mode, err := strconv.ParseUint(m, 8, 32)
		if err != nil {
			t.Fatalf("modes[%s]: %v", rel, err)
		}
		if err := os.Chmod(filepath.Join(root, rel), fs.FileMode(mode)); err != nil {
			t.Fatal(err)
		}
	}
	for rel, d := range sc.Setup.Mtimes {
		off, err := time.ParseDuration(d)
		if err != nil {
			t.Fatalf("mtimes[%s]: %v", rel, err)
		}
		if err := os.Chtimes(filepath.Join(root, rel), now.Add(off), now.Add(off)); err != nil {
			t.Fatal(err)
		}
	}
	for rel, o := range sc.Setup.Owners {
		var uid, gid int
		if _, err := fmt.Sscanf(o, "%d:%d", &uid, &gid); err != nil {
			t.Fatalf("owners[%s]: %v", rel, err)
		}
		if err := os.Lchown(filepath.Join(root, rel), uid, gid); err != nil {
			t.Fatalf("owners[%s]: %v (the fixture tests run as root, as CI does)", rel, err)
		}
	}
	return root
}

// makeSocket leaves a unix socket file at p with nothing listening on it.
func makeSocket(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatalf("sockets[%s]: %v", p, err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
}

// writeSSHKey writes the key seeded by rel: its private half, or with
// "public" its authorized_keys line.
func writeSSHKey(t *testing.T, root, rel, kind string) {
	t.Helper()
	seed := sha256.Sum256([]byte(strings.TrimSuffix(rel, ".pub")))
	priv, authorized := testpki.SSHKeyFromSeed(seed[:], "fixture")
	switch kind {
	case "public":
		priv = []byte(authorized + "\n")
	case "ed25519":
	default:
		t.Fatalf("sshKeys[%s]: %q is neither ed25519 nor public", rel, kind)
	}
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, priv, 0o600); err != nil {
		t.Fatal(err)
	}
}

// runnerOf is the runner findings[0] names, for a failure message.
func runnerOf(rep *report.Report) any {
	if len(rep.Findings) == 0 || rep.Findings[0].Runner == nil {
		return "none"
	}
	return *rep.Findings[0].Runner
}

func writeKubeconfig(t *testing.T, root string, now time.Time, k KubeconfigSpec) {
	t.Helper()
	rel := func(s string) time.Time {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("kubeconfig %s: %q: %v", k.Path, s, err)
		}
		return now.Add(d)
	}
	ca, err := testpki.NewCA("tenant-ci PKI", now.Add(-48*time.Hour), now.Add(10*365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Client(k.CN, k.Groups, rel(k.NotBefore), rel(k.NotAfter))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, k.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := fs.FileMode(0o600)
	if k.Mode != "" {
		m, err := strconv.ParseUint(k.Mode, 8, 32)
		if err != nil {
			t.Fatal(err)
		}
		mode = fs.FileMode(m)
	}
	data := testpki.Kubeconfig("tenant-ci", k.Server, ca.CertPEM, cert, key)
	if k.OmitCurrentContext {
		data = bytes.Replace(data, []byte("current-context: tenant-ci\n"), nil, 1)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func topOf(rep *report.Report) string {
	if len(rep.Findings) == 0 {
		return "(none)"
	}
	return rep.Findings[0].Check
}

func checksOf(rep *report.Report) string {
	var s []string
	for _, f := range rep.Findings {
		s = append(s, f.Check)
	}
	return strings.Join(s, ", ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
