package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// module is the import path every package of doctor starts with.
const module = "github.com/socialwebcomputer/doctor"

// A layer is a band of packages. A package may import the packages of the
// layers its layer reaches through imports (the closure, so every layer
// reaches those below the ones it names), and of its own layer only where
// siblings is set. docs/development.md's Layout section says the same in words.
type layer struct {
	name     string
	dirs     []string // "x" is the package x; "x/..." x and below; "x/*" the packages one level below x
	siblings bool     // its packages may import each other
	imports  []string // the layers right below it
}

// layers, from the top down. The order is the tree's as it is: each row
// was read off `go list`, and a new package fits a row or the test fails.
var layers = []layer{
	// bench, deploy and cmd/doctor/e2e hold only tests (and a doc.go):
	// measurements of the binary, proofs of the manifests, and doctor end
	// to end, which may reach anything.
	{name: "harness", dirs: []string{"bench", "deploy", "cmd/doctor/e2e"}, imports: []string{"main"}},
	{name: "main", dirs: []string{"cmd/doctor"}, imports: []string{"cli"}},
	// cobra wiring: flags, commands, exit codes.
	{name: "cli", dirs: []string{"cmd/doctor/cli"}, imports: []string{"app"}},
	// doctor's features (trace, bundle, metrics, state, symptom) stand
	// apart: the CLI wires them, none builds on another.
	{name: "app", dirs: []string{"cmd/doctor/app/..."}, imports: []string{"registry", "report"}},
	{name: "registry", dirs: []string{"checks/all"}, imports: []string{"check"}},
	// A check never imports another: it requires one by its ID,
	// checks.Ref("api-auth"), and names it so in a finding's CausedBy.
	{name: "check", dirs: []string{"checks/*"}, imports: []string{"facts"}},
	// A fact never imports a check (it gates on one by Ref); facts build on
	// facts (kubelet's reads on the cluster's lists).
	{name: "facts", dirs: []string{"checks/facts/..."}, siblings: true, imports: []string{"clients"}},
	{name: "clients", dirs: []string{"checks/client/..."}, siblings: true, imports: []string{"engine"}},
	// report renders the engine's Result and knows no check, fact or
	// client: it sits beside them, on the engine, so what a check says and
	// how it is printed change apart; the features and the CLI print
	// through it.
	{name: "report", dirs: []string{"report"}, imports: []string{"engine"}},
	{name: "engine", dirs: []string{"checks"}, imports: []string{"source"}},
	// Parsers of host material read it through the door (systemd's units
	// with hostio.Env, the one door for I/O), so they sit above it.
	{name: "source", dirs: []string{"internal/source/..."}, siblings: true, imports: []string{"fixcode"}},
	// The encoders a fix is rendered by: the engine's steps, the facts'
	// command prefixes, the checks' fixes and the report's verify line.
	{name: "fixcode", dirs: []string{"internal/fixcode"}, imports: []string{"hostio"}},
	{name: "hostio", dirs: []string{"internal/hostio/..."}, siblings: true, imports: []string{"redact"}},
	{name: "redact", dirs: []string{"internal/redact"}, imports: []string{"runnerconfig"}},
	{name: "runnerconfig", dirs: []string{"runnerconfig/..."}, siblings: true, imports: []string{"text"}},
	// Leaf utilities: every layer reaches them, they import nothing of
	// doctor's.
	{name: "text", dirs: []string{"internal/text/..."}},
}

// testSupport is the layer of packages only tests may import: the test
// infrastructure, checks/checktest, and every package whose name ends in
// test or fake (gitlabtest, kubefake, safetexttest). A test-support package
// may import any layer below main, and other test support; no other
// package's non-test files may import one. Test files themselves may
// import any package: a check's test may run the registry's catalog, and
// nothing a test imports reaches the binary.
const testSupport = "test support"

var testSupportDirs = []string{"testkit/...", "checks/checktest"}

func isTestSupport(rel string) bool {
	last := rel[strings.LastIndex(rel, "/")+1:]
	if strings.HasSuffix(last, "test") || strings.HasSuffix(last, "fake") {
		return true
	}
	for _, d := range testSupportDirs {
		if matches(d, rel) {
			return true
		}
	}
	return false
}

// matches reports whether the package rel (its path inside the module)
// is one dir names.
func matches(dir, rel string) bool {
	switch {
	case strings.HasSuffix(dir, "/..."):
		d := strings.TrimSuffix(dir, "/...")
		return rel == d || strings.HasPrefix(rel, d+"/")
	case strings.HasSuffix(dir, "/*"):
		d := strings.TrimSuffix(dir, "*")
		return strings.HasPrefix(rel, d) && !strings.Contains(rel[len(d):], "/")
	}
	return rel == dir
}

// layerOf names the layer of the package rel: test support first, then
// the row whose dir names it most closely (checks/facts is facts, not a
// check), or "" when no row does.
func layerOf(rel string) string {
	if isTestSupport(rel) {
		return testSupport
	}
	best, bestLen := "", -1
	for _, l := range layers {
		for _, d := range l.dirs {
			if n := len(strings.TrimRight(d, "/.*")); matches(d, rel) && n > bestLen {
				best, bestLen = l.name, n
			}
		}
	}
	return best
}

// reach is, for each layer, the layers it may import: the closure of
// imports.
func reach(t *testing.T) map[string]map[string]bool {
	byName := map[string]layer{}
	for _, l := range layers {
		byName[l.name] = l
	}
	r := map[string]map[string]bool{}
	var walk func(from string, l layer)
	walk = func(from string, l layer) {
		for _, below := range l.imports {
			bl, ok := byName[below]
			if !ok {
				t.Fatalf("layer %s imports %q, which is no layer", l.name, below)
			}
			if !r[from][below] {
				r[from][below] = true
				walk(from, bl)
			}
		}
	}
	for _, l := range layers {
		r[l.name] = map[string]bool{}
		walk(l.name, l)
	}
	return r
}

// may reports whether a package of layer from may import one of layer to.
func may(r map[string]map[string]bool, from, to string) bool {
	switch {
	case to == testSupport:
		return from == testSupport
	case from == testSupport:
		return to != "main" && to != "harness"
	case from == to:
		for _, l := range layers {
			if l.name == from {
				return l.siblings
			}
		}
	}
	return r[from][to]
}

type listed struct {
	ImportPath string
	Imports    []string
}

// goList lists doctor's packages with their non-test imports.
func goList(t *testing.T, flags ...string) []listed {
	t.Helper()
	args := append(append([]string{"list"}, flags...), "-json=ImportPath,Imports", module+"/...")
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go %v: %v", args, err)
	}
	var ps []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go %v: its output: %v", args, err)
		}
		ps = append(ps, p)
	}
	if len(ps) < 50 {
		t.Fatalf("go %v named %d packages; the module has more", args, len(ps))
	}
	return ps
}

// relPath is an import path of doctor's inside the module ("" for its root).
func relPath(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")
}

// TestImportsRunDownTheLayers proves every import of doctor's non-test
// files runs down the layers of the table above.
func TestImportsRunDownTheLayers(t *testing.T) {
	r := reach(t)
	used := map[string]bool{}
	// The integration tag adds files to some packages (testenv's), and
	// with them imports.
	ps := append(goList(t), goList(t, "-tags", "integration")...)
	for _, p := range ps {
		rel := relPath(p.ImportPath)
		from := layerOf(rel)
		if from == "" {
			t.Errorf("%s is in no layer: give it a row of layers_test.go and a line of docs/development.md's Layout", rel)
			continue
		}
		used[from] = true
		for _, imp := range p.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			irel := relPath(imp)
			to := layerOf(irel)
			if to != "" && !may(r, from, to) {
				t.Errorf("%s (%s) imports %s (%s), against the layers", rel, from, irel, to)
			}
		}
	}
	for _, l := range layers {
		if !used[l.name] {
			t.Errorf("layer %s holds no package: its row has gone stale", l.name)
		}
	}
}

// TestLayerOf pins how a package finds its row, so a change of matching
// cannot quietly move packages out of the rules.
func TestLayerOf(t *testing.T) {
	for rel, want := range map[string]string{
		"checks":                       "engine",
		"checks/all":                   "registry",
		"checks/apiauth":               "check",
		"checks/facts":                 "facts",
		"checks/facts/cluster":         "facts",
		"checks/facts/hostfacts":       "facts",
		"checks/client/kube/keep":      "clients",
		"checks/client/kube/kubefake":  testSupport,
		"checks/checktest":             testSupport,
		"testkit/testenv":              testSupport,
		"internal/source/systemd":      "source",
		"internal/hostio/atomicfile":   "hostio",
		"internal/fixcode":             "fixcode",
		"runnerconfig/jobpod":          "runnerconfig",
		"internal/text/safetext":       "text",
		"cmd/doctor/app/trace":         "app",
		"cmd/doctor/e2e":               "harness",
		"testkit/cmdtest":              testSupport,
		"internal/nowhere":             "",
		"checks/apiauth/testdata/nope": "",
	} {
		if got := layerOf(rel); got != want {
			t.Errorf("layerOf(%s) = %q, want %q", rel, got, want)
		}
	}
	r := reach(t)
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"check", "check", false},
		{"facts", "check", false},
		{"facts", "facts", true},
		{"check", "report", false},
		{"report", "check", false},
		{"report", "engine", true},
		{"cli", "text", true},
		{"engine", "test support", false},
		{"test support", "engine", true},
		{"test support", "main", false},
		{"source", "hostio", true},
		{"hostio", "source", false},
	} {
		if got := may(r, c.from, c.to); got != c.want {
			t.Errorf("may(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// TestReadmeLayoutNamesEveryFolder keeps the Layout section of
// docs/development.md (the README's, before it moved there) true: every
// folder of packages (to the depth the section goes, checks/<id>/ for the
// checks, a nested internal/ as one) has its line, and every line names a
// folder that exists.
func TestReadmeLayoutNamesEveryFolder(t *testing.T) {
	b, err := os.ReadFile("../../" + layoutDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal(layoutDoc + " has no ## Layout section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	lines := map[string]bool{}
	for _, l := range strings.Split(block, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasSuffix(f[0], "/") && !strings.HasPrefix(l, " ") {
			lines[strings.TrimSuffix(f[0], "/")] = true
		}
	}
	for _, p := range goList(t) {
		if f := layoutFolder(relPath(p.ImportPath)); !lines[f] {
			t.Errorf("%s's Layout has no line for %s/ (package %s)", layoutDoc, f, p.ImportPath)
		}
	}
	for f := range lines {
		if f == "checks/<id>" {
			continue
		}
		if fi, err := os.Stat("../../" + f); err != nil || !fi.IsDir() {
			t.Errorf("%s's Layout names %s/, which is no folder", layoutDoc, f)
		}
	}
}

// layoutDoc holds the Layout section, from the repository's root.
const layoutDoc = "docs/development.md"

// layoutFolder is the line of the Layout section a package belongs to.
func layoutFolder(rel string) string {
	if layerOf(rel) == "check" {
		return "checks/<id>"
	}
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if i > 0 && p == "internal" {
			return strings.Join(parts[:i+1], "/")
		}
	}
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.Join(parts, "/")
}

// folders is the top level from the top down: the picture a newcomer sees
// first. Each folder's packages (their non-test files, with and without
// the integration tag) import only folders below it, so no arrow of the
// folder-level import graph runs back up: the binary's wiring (cmd), the
// test kit, the renderer, the engine with its checks, facts and clients,
// config.toml's model, and the bottom the checks stand on (internal).
// Test support (testkit, checktest, the *test and *fake packages) is, like
// a test file, outside the graph: only tests import it
// (TestImportsRunDownTheLayers holds that), and it may reach anything below
// main. docs/development.md's Layout says the same.
var folders = []string{"bench", "deploy", "cmd", "testkit", "report", "checks", "runnerconfig", "internal"}

// TestTopLevelFoldersRunDown proves the folder-level graph has no arrow
// running back up, and that every folder holding a package has a place.
func TestTopLevelFoldersRunDown(t *testing.T) {
	rank := map[string]int{}
	for i, f := range folders {
		rank[f] = i
	}
	top := func(rel string) string { return strings.SplitN(rel, "/", 2)[0] }
	arrows := map[[2]string]string{}
	for _, p := range append(goList(t), goList(t, "-tags", "integration")...) {
		rel := relPath(p.ImportPath)
		from := top(rel)
		if _, ok := rank[from]; !ok {
			t.Errorf("%s is in top-level folder %q, which has no place in folders (layers_test.go) nor docs/development.md's Layout", rel, from)
			continue
		}
		if isTestSupport(rel) {
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if to := top(relPath(imp)); to != from {
				arrows[[2]string{from, to}] = rel + " imports " + relPath(imp)
			}
		}
	}
	for a, example := range arrows {
		if rank[a[0]] > rank[a[1]] {
			t.Errorf("%s/ imports %s/, which is above it (%s)", a[0], a[1], example)
		}
	}
	if len(arrows) < 8 {
		t.Errorf("only %d folder-level arrows: the listing missed packages", len(arrows))
	}
}
