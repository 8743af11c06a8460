package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// TestDumpOutputs writes every output a doctor binary gives for the
// committed inputs into a directory, one file per invocation, so that two
// binaries (before and after a change meant to keep every byte) can be
// compared with diff -r. It runs only when DOCTOR_DUMP_BIN names the binary
// and DOCTOR_DUMP_DIR the directory; scripts/outputs-unchanged.sh sets both.
//
// The binary runs as a process of its own, with an environment of only
// DOCTOR_LOOPBACK_ONLY=1 (and COLUMNS, LANG where a variant asks for them)
// in an empty working directory, so nothing of the caller's reaches it.
// Each fixture's root is laid out by fixture.LayRoot, as TestScenarios lays it.
//
// It dumps, for every fixture: run in every format (table at the default,
// 80 and 200 columns, wide, json, yaml, markdown), each with and without
// --verbose; run --bundle, the bundle's files and analyze of the bundle in
// every format; why of every log in testdata/logs. Then checks in every
// format, explain of every check, version, and --help of every command.
// Each file holds the exit code, stdout and stderr, with wall-clock
// durations and temporary paths normalised as the goldens normalise them.
func TestDumpOutputs(t *testing.T) {
	bin, dir := os.Getenv("DOCTOR_DUMP_BIN"), os.Getenv("DOCTOR_DUMP_DIR")
	if bin == "" || dir == "" {
		t.Skip("DOCTOR_DUMP_BIN and DOCTOR_DUMP_DIR unset: scripts/outputs-unchanged.sh runs this")
	}
	d := &dumper{t: t, bin: bin, dir: dir, cwd: t.TempDir()}
	fixtureDirs, err := filepath.Glob(filepath.Join(cmdtest.Fixtures, "*", "scenario.json"))
	if err != nil || len(fixtureDirs) == 0 {
		t.Fatalf("no scenarios under %s: %v", cmdtest.Fixtures, err)
	}
	logs, err := filepath.Glob("../../../testdata/logs/*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs under testdata/logs: %v", err)
	}
	for _, sj := range fixtureDirs {
		fixture, err := filepath.Abs(filepath.Dir(sj))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(fixture), func(t *testing.T) { d.fixture(t, fixture, logs) })
	}
	d.catalog()
}

type dumper struct {
	t        *testing.T
	bin, dir string
	cwd      string // an empty working directory: no .doctor.yaml
}

// outputVariants are the formats of run and analyze, by file name.
var outputVariants = []struct {
	name string
	args []string
	env  []string
}{
	{"table", []string{"-o", "table"}, nil},
	{"table-80", []string{"-o", "table"}, []string{"COLUMNS=80", "LANG=C.UTF-8"}},
	{"table-200", []string{"-o", "table"}, []string{"COLUMNS=200", "LANG=C.UTF-8"}},
	{"wide", []string{"-o", "wide"}, nil},
	{"json", []string{"-o", "json"}, nil},
	{"yaml", []string{"-o", "yaml"}, nil},
	{"markdown", []string{"-o", "markdown"}, nil},
}

func (d *dumper) fixture(t *testing.T, dir string, logs []string) {
	sc := fixture.Load(t, dir)
	root := fixture.LayRoot(t, dir, sc)
	name := filepath.Base(dir)
	common := []string{"--root", root, "--now", sc.Now}
	for _, a := range sc.Args {
		common = append(common, strings.ReplaceAll(a, "$FIXTURE", dir))
	}
	paths := map[string]string{root: "$ROOT", dir: "$FIXTURE"}
	for _, v := range outputVariants {
		for _, verbose := range []bool{false, true} {
			args := append(append([]string{"run"}, common...), v.args...)
			file := "run-" + v.name
			if verbose {
				args, file = append(args, "--verbose"), file+"-verbose"
			}
			d.dump(filepath.Join("fixtures", name, file), paths, v.env, args...)
		}
	}

	bundle := filepath.Join(t.TempDir(), "bundle.tar.gz")
	paths[bundle] = "$BUNDLE"
	d.dump(filepath.Join("fixtures", name, "bundle-run"), paths, nil, append(append([]string{"run"}, common...), "-o", "json", "--bundle", bundle)...)
	d.dumpBundle(filepath.Join("fixtures", name, "bundle"), bundle, paths)
	for _, v := range outputVariants {
		d.dump(filepath.Join("fixtures", name, "analyze-"+v.name), paths, v.env, append([]string{"analyze", bundle}, v.args...)...)
	}

	for _, l := range logs {
		abs, err := filepath.Abs(l)
		if err != nil {
			t.Fatal(err)
		}
		p := map[string]string{root: "$ROOT", dir: "$FIXTURE", abs: "$LOG"}
		base := strings.TrimSuffix(filepath.Base(l), ".log")
		d.dump(filepath.Join("fixtures", name, "why-"+base), p, nil, append([]string{"why", abs}, common...)...)
		d.dump(filepath.Join("fixtures", name, "why-"+base+"-json"), p, nil, append(append([]string{"why", abs}, common...), "-o", "json")...)
	}
}

// catalog dumps what needs no host: the check list, every check's
// explanation, the version and every command's help.
func (d *dumper) catalog() {
	none := map[string]string{}
	for _, o := range []string{"table", "wide", "json", "yaml"} {
		d.dump(filepath.Join("catalog", "checks-"+o), none, nil, "checks", "-o", o)
	}
	out := d.run(nil, "checks", "-o", "json")
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) == 0 {
		d.t.Fatalf("checks -o json: %v\n%s", err, out)
	}
	for _, c := range list {
		d.dump(filepath.Join("catalog", "explain-"+c.ID), none, nil, "explain", c.ID)
	}
	d.dump(filepath.Join("catalog", "explain-no-such-check"), none, nil, "explain", "no-such-check")
	for _, o := range []string{"text", "json", "yaml"} {
		d.dump(filepath.Join("catalog", "version-"+o), none, nil, "version", "-o", o)
	}
	d.dump(filepath.Join("catalog", "no-command"), none, nil)
	d.dump(filepath.Join("catalog", "help"), none, nil, "--help")
	for _, cmd := range subcommands(d.run(nil, "--help")) {
		d.dump(filepath.Join("catalog", "help-"+cmd), none, nil, cmd, "--help")
		d.dump(filepath.Join("catalog", "help-cmd-"+cmd), none, nil, "help", cmd)
	}
	for _, shell := range subcommands(d.run(nil, "completion", "--help")) {
		d.dump(filepath.Join("catalog", "help-completion-"+shell), none, nil, "completion", shell, "--help")
		d.dump(filepath.Join("catalog", "completion-"+shell), none, nil, "completion", shell)
	}
}

// subcommands are the names listed under a help text's "Available Commands:".
func subcommands(help string) []string {
	var names []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case line == "Available Commands:":
			in = true
		case in && strings.TrimSpace(line) == "":
			return names
		case in:
			names = append(names, strings.Fields(line)[0])
		}
	}
	return names
}

// dump runs the binary and writes "exit N", stdout and stderr to file.
func (d *dumper) dump(file string, paths map[string]string, env []string, args ...string) {
	d.t.Helper()
	cmd := exec.Command(d.bin, args...)
	cmd.Dir = d.cwd
	cmd.Env = append([]string{"DOCTOR_LOOPBACK_ONLY=1"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		d.t.Fatalf("%s: %v", file, err)
	}
	text := fmt.Sprintf("exit %d\n--- stdout\n%s\n--- stderr\n%s", code, out.String(), errb.String())
	d.write(file, unwrapTimed(normalizePaths(text, paths)))
}

// run is the stdout of one invocation, for the dump to enumerate from.
func (d *dumper) run(env []string, args ...string) string {
	d.t.Helper()
	cmd := exec.Command(d.bin, args...)
	cmd.Dir = d.cwd
	cmd.Env = append([]string{"DOCTOR_LOOPBACK_ONLY=1"}, env...)
	out, _ := cmd.Output()
	return string(out)
}

// dumpBundle writes every file of the bundle, in the order it holds them,
// with each header's name, mode and size.
func (d *dumper) dumpBundle(file, bundle string, paths map[string]string) {
	d.t.Helper()
	f, err := os.Open(bundle)
	if err != nil {
		d.write(file, "no bundle: "+normalizePaths(err.Error(), paths))
		return
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		d.t.Fatalf("%s: %v", bundle, err)
	}
	tr := tar.NewReader(gz)
	var b strings.Builder
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			d.t.Fatalf("%s: %v", bundle, err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			d.t.Fatalf("%s: %v", bundle, err)
		}
		fmt.Fprintf(&b, "=== %s mode %o\n%s\n", h.Name, h.Mode, body)
	}
	d.write(file, bundleNoise.ReplaceAllString(normalizePaths(b.String(), paths), "${1}${2}…"))
}

func (d *dumper) write(file, text string) {
	d.t.Helper()
	p := filepath.Join(d.dir, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// bundleNoise is what differs between two bundles of the same fixture: the
// modification times of the files fixture.LayRoot wrote now, the bytes of the keys
// and certificates minted at random for each root (base64 runs; PEM lines
// are 64 wide) and the sizes that vary with them (an ECDSA signature's DER
// is 70 to 72 bytes).
var bundleNoise = regexp.MustCompile(`("modTime": ")[^"]*|("size": )\d+|()[A-Za-z0-9+/]{60,}={0,2}`)

// timedLine is a line of a verbose table that names a check's duration,
// which is wall time: its digits change where the line wraps.
var timedLine = regexp.MustCompile(`\(\d+ms\)`)

// unwrapTimed joins a line that names a duration with the lines that
// continue it (indented by two spaces), so a duration of more digits,
// which moves a word to the next line, is not a difference. The words and
// their order are still compared.
func unwrapTimed(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	joining := false
	for _, l := range lines {
		if joining && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
			out[len(out)-1] += " " + l[2:]
			continue
		}
		joining = timedLine.MatchString(l)
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// normalizePaths replaces the temporary paths of one invocation by their
// names (longest first, so a path inside another keeps its own name) and
// zeroes durations as fixture.Normalize does.
func normalizePaths(s string, paths map[string]string) string {
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, paths[k])
	}
	return yamlDuration.ReplaceAllString(fixture.Normalize(s), "${1}0")
}

// yamlDuration is fixture.Normalize's durationMs in -o yaml.
var yamlDuration = regexp.MustCompile(`(?m)^(\s*(?:- )?durationMs: )\d+$`)
