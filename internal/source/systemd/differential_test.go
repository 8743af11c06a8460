package systemd

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/realsystemd"
)

// diffRows is how many generated layouts TestModelAgreesWithSystemd asks
// systemd about, beside the written ones.
const diffRows = 240

// TestModelAgreesWithSystemd lays out generated unit directories, asks the
// machine's own systemd (252 on Debian 12, run as PID 1 of its own
// namespaces by testkit/realsystemd) with `systemctl show` what it
// loaded, and loads the same files with Load under a root: every property
// the model knows must be what systemd says, on every row. The layouts
// cover every directive and path the model claims: fragments in /etc, /run,
// /lib (= /usr/lib), the transient and control directories, an /etc unit
// shadowing /lib's, masks, a link to itself; templates and their
// instances, an instance's own file, enabled instances; drop-ins in the
// unit's, the template's, the dash-prefix's and the type's directories,
// across every directory, a same-named file masking a later one, files
// systemd ignores (not *.conf, hidden, backups), a drop-in linked to
// /dev/null; Environment= with resets, repeats, quotes, C escapes, invalid
// names and specifiers; UnsetEnvironment= with names, assignments, resets
// and repeats; EnvironmentFile=, ExecStart=, User=, WorkingDirectory=.
func TestModelAgreesWithSystemd(t *testing.T) {
	m := realsystemd.Start(t)
	t.Logf("systemd %s (merged /usr: %v)", m.Version, m.MergedUsr)
	rows := writtenRows()
	r := rand.New(rand.NewPCG(30, 252))
	for i := 0; i < diffRows; i++ {
		rows = append(rows, generateRow(r, i))
	}
	seen := map[string]int{}
	agreed, environs := 0, 0
	for _, row := range rows {
		row.files["/lib/systemd/system/multi-user.target"] = realsystemd.File{Content: "[Unit]\nDescription=Multi-User System\n"}
		for _, f := range row.features {
			seen[f]++
		}
		if err := m.Layout(row.files); err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		_, raw, err := m.Show(row.unit, ShowProperties...)
		if err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		real, err := ParseShow(raw)
		if err != nil {
			t.Fatalf("%s: %v\n%s", row.name, err, raw)
		}
		// Enabled, as the manager acts on it: multi-user.target (every
		// layout has its file: a target without one is not-found and reads
		// no .wants/) wants the unit from a .wants/ link. UnitFileState is
		// `systemctl is-enabled`'s view of the files, another question.
		wants, _, err := m.Show("multi-user.target", "Wants")
		if err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		wanted := false
		for _, w := range wants["Wants"] {
			ws, _ := SplitShowList(w)
			wanted = wanted || slices.Contains(ws, row.unit)
		}
		unit, enabled := modelOf(t, m.MergedUsr, row)
		model := unit.AsShow()
		diff := compareShow(model, real)
		if diff == "" && real.LoadState == "loaded" {
			// What the process gets: started with a probe drop-in that
			// prints its environment.
			env, err := m.Environ(row.unit)
			if err != nil {
				t.Fatalf("%s: %v\nlayout:\n%s", row.name, err, row.describe())
			}
			diff = compareEnviron(unit, env)
			environs++
		}
		if diff != "" || enabled != wanted {
			t.Errorf("%s: the model disagrees with systemd on %s:\n%s\nmodel enabled: %v, multi-user.target wants it: %v\nlayout:\n%s\nsystemctl show:\n%s",
				row.name, row.unit, diff, enabled, wanted, row.describe(), raw)
			continue
		}
		agreed++
	}
	t.Logf("%d of %d rows agree (%d written, %d generated); %d of them started, their environment compared", agreed, len(rows), len(rows)-diffRows, diffRows, environs)
	for _, f := range diffFeatures {
		if seen[f] < 3 {
			t.Errorf("the layouts cover %q only %d times", f, seen[f])
		}
	}
}

// diffFeatures are what the rows must cover, each at least three times.
var diffFeatures = []string{
	"fragment /etc", "fragment /run", "fragment /lib", "fragment transient", "fragment control",
	"/etc shadows /lib", "masked", "empty fragment", "link to itself", "not found",
	"template", "instance file", "enabled instance", "enabled runtime",
	"drop-in name.d", "drop-in template.d", "drop-in prefix.d", "drop-in service.d", "drop-in /lib", "drop-in /run", "drop-in transient",
	"same name masks", "ignored file", "drop-in /dev/null",
	"Environment= reset", "Environment= repeat", "Environment= quotes", "Environment= specifiers", "Environment= invalid",
	"UnsetEnvironment=", "UnsetEnvironment= value", "UnsetEnvironment= reset",
	"EnvironmentFile=", "EnvironmentFile= read", "ExecStart= reset", "User=", "WorkingDirectory=",
}

type diffRow struct {
	name, unit string
	files      map[string]realsystemd.File
	features   []string
}

func (r diffRow) describe() string {
	paths := make([]string, 0, len(r.files))
	for p := range r.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		f := r.files[p]
		switch {
		case f.Link != "":
			fmt.Fprintf(&b, "  %s -> %s\n", p, f.Link)
		default:
			fmt.Fprintf(&b, "  %s:\n    %s\n", p, strings.ReplaceAll(strings.TrimSuffix(f.Content, "\n"), "\n", "\n    "))
		}
	}
	return b.String()
}

// modelOf loads the row's unit from a root holding the same files, laid
// out as the host's: /lib a link to usr/lib on a merged-/usr host.
func modelOf(t *testing.T, mergedUsr bool, row diffRow) (*Unit, bool) {
	t.Helper()
	root := t.TempDir()
	if mergedUsr {
		if err := os.MkdirAll(filepath.Join(root, "usr/lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]realsystemd.File{"/run/systemd/system/" + realsystemd.Target: {Content: "[Unit]\n"}}
	for p, f := range row.files {
		files[p] = f
	}
	for p, f := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case f.Dir:
			err = os.MkdirAll(full, 0o755)
		case f.Link != "":
			err = os.Symlink(f.Link, full)
		default:
			err = os.WriteFile(full, []byte(f.Content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	env := &hostio.Env{Root: root}
	u, err := Load(env, row.unit)
	if err != nil {
		t.Fatalf("%s: Load: %v", row.name, err)
	}
	enabled := false
	if u.Found() {
		// A masked unit's .wants/ link still makes the target want it
		// (its start then fails): hostfacts.ServiceFact asks Enabled of it too.
		enabled, _ = Enabled(env, row.unit)
	}
	return u, enabled
}

// compareEnviron names every variable the unit's settings touch whose
// value (or absence) in the started process is not what the model's
// Environ says.
func compareEnviron(u *Unit, env map[string]string) string {
	vars, _ := u.Environ()
	names := map[string]bool{}
	for k := range vars {
		names[k] = true
	}
	for _, a := range u.Environment {
		names[a.Name] = true
	}
	for _, x := range u.UnsetEnvironment {
		names[x.Name] = true
	}
	for _, f := range u.EnvironmentFiles {
		for _, a := range f.Vars {
			names[a.Name] = true
		}
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(names)) {
		mv, mok := vars[k]
		pv, pok := env[k]
		if mok != pok || mv != pv {
			diffs = append(diffs, fmt.Sprintf("  process environment %s: model %q (set %v), systemd %q (set %v)", k, mv, mok, pv, pok))
		}
	}
	return strings.Join(diffs, "\n")
}

// compareShow names every property on which the model and systemd differ.
func compareShow(model, real *Show) string {
	var diffs []string
	add := func(name string, m, r any) {
		if !reflect.DeepEqual(m, r) {
			diffs = append(diffs, fmt.Sprintf("  %s: model %q, systemd %q", name, m, r))
		}
	}
	add("LoadState", model.LoadState, real.LoadState)
	add("FragmentPath", model.FragmentPath, real.FragmentPath)
	if real.LoadState == "loaded" && model.LoadState == "loaded" {
		add("DropInPaths", nonNil(model.DropInPaths), nonNil(real.DropInPaths))
		add("Environment", nonNil(model.Environment), nonNil(real.Environment))
		add("UnsetEnvironment", nonNil(model.UnsetEnvironment), nonNil(real.UnsetEnvironment))
		add("EnvironmentFiles", fmt.Sprint(model.EnvironmentFiles), fmt.Sprint(real.EnvironmentFiles))
		add("ExecStart", fmt.Sprint(model.ExecStart), fmt.Sprint(real.ExecStart))
		add("User", model.User, real.User)
		add("WorkingDirectory", model.WorkingDirectory, real.WorkingDirectory)
	}
	return strings.Join(diffs, "\n")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writtenRows are layouts chosen by hand, each one case the issue names.
func writtenRows() []diffRow {
	const frag = "[Service]\nExecStart=/usr/bin/gitlab-runner run --working-directory /home/gitlab-runner\nEnvironment=KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml\n[Install]\nWantedBy=multi-user.target\n"
	return []diffRow{
		{name: "a reset after the kubeconfig drop-in wins", unit: "gitlab-runner.service", files: map[string]realsystemd.File{
			"/lib/systemd/system/gitlab-runner.service":                   {Content: frag},
			"/etc/systemd/system/gitlab-runner.service.d/kubeconfig.conf": {Content: "[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/tenant.yaml\n"},
			"/etc/systemd/system/gitlab-runner.service.d/override.conf":   {Content: "[Service]\nEnvironment=\nEnvironment=HTTPS_PROXY=http://proxy:3128\n"},
		}},
		{name: "UnsetEnvironment= is applied last, whatever sorts after it", unit: "gitlab-runner.service", files: map[string]realsystemd.File{
			"/lib/systemd/system/gitlab-runner.service":                      {Content: frag + "[Service]\nUnsetEnvironment=KUBECONFIG\n"},
			"/etc/systemd/system/gitlab-runner.service.d/zz-kubeconfig.conf": {Content: "[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/tenant.yaml\n"},
		}},
		{name: "an enabled instance of the template", unit: "gitlab-runner@tenant.service", files: map[string]realsystemd.File{
			"/lib/systemd/system/gitlab-runner@.service":                               {Content: "[Service]\nExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/%i/config.toml --service %N\nEnvironment=KUBECONFIG=/etc/gitlab-runner/%i/kubeconfig.yaml RUNNER=%I UNIT=%n\n[Install]\nWantedBy=multi-user.target\n"},
			"/etc/systemd/system/multi-user.target.wants/gitlab-runner@tenant.service": {Link: "/lib/systemd/system/gitlab-runner@.service"},
			"/etc/systemd/system/gitlab-runner@.service.d/proxy.conf":                  {Content: "[Service]\nEnvironment=HTTPS_PROXY=http://%i-proxy:3128\n"},
		}},
		{name: "an /etc unit shadows /lib's, drop-ins of both apply", unit: "gitlab-runner.service", files: map[string]realsystemd.File{
			"/lib/systemd/system/gitlab-runner.service":                  {Content: frag},
			"/etc/systemd/system/gitlab-runner.service":                  {Content: "[Service]\nExecStart=/opt/gitlab-runner run\n"},
			"/lib/systemd/system/gitlab-runner.service.d/10-vendor.conf": {Content: "[Service]\nEnvironment=VENDOR=1\n"},
			"/etc/systemd/system/gitlab-runner.service.d/README":         {Content: "[Service]\nEnvironment=README=1\n"},
			"/etc/systemd/system/gitlab-runner.service.d/kube.conf.bak":  {Content: "[Service]\nEnvironment=BAK=1\n"},
		}},
	}
}

// The pools the generator draws from.
var (
	fragmentDirs = []string{"/etc/systemd/system", "/run/systemd/system", "/lib/systemd/system", "/run/systemd/transient", "/etc/systemd/system.control"}
	dropInDirs   = []string{"/etc/systemd/system", "/run/systemd/system", "/lib/systemd/system", "/run/systemd/transient", "/etc/systemd/system.control", "/run/systemd/system.control"}
	dropInNames  = []string{"00-first.conf", "10-env.conf", "20-kube.conf", "50-reset.conf", "kubeconfig.conf", "override.conf", "zz-last.conf"}
	ignoredNames = []string{"README", "notes.txt", "x.conf.bak", "old.conf~", ".hidden.conf", "y.conf.dpkg-old", "Z.CONF", "kube.conf.disabled", "v.conf.swp"}
	instances    = []string{"main", `srv-ci\x2dbuild`, "tenant"}
)

var fragmentFeature = map[string]string{
	"/etc/systemd/system": "fragment /etc", "/run/systemd/system": "fragment /run", "/lib/systemd/system": "fragment /lib",
	"/run/systemd/transient": "fragment transient", "/etc/systemd/system.control": "fragment control",
}

func dirTag(d string) string {
	return map[string]string{
		"/etc/systemd/system": "etc", "/run/systemd/system": "run", "/lib/systemd/system": "lib",
		"/run/systemd/transient": "transient", "/etc/systemd/system.control": "control", "/run/systemd/system.control": "runcontrol",
	}[d]
}

// envFileContent is what a generated environment file holds: a variable
// of its own, one the units set too, and one they unset.
func envFileContent(tag string) string {
	return "# " + tag + "\nFILE_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_", "@", "_", "\\", "_").Replace(tag)) + "=1\nA=from-file-" + tag + "\nKUBECONFIG=/etc/gitlab-runner/file-" + tag + ".yaml\nB=b\n"
}

// line is one drop-in or fragment line, and the feature it covers.
func line(r *rand.Rand, tag string) (string, string) {
	switch r.IntN(22) {
	case 0, 1, 2:
		return "Environment=KUBECONFIG=/etc/gitlab-runner/" + tag + ".yaml", ""
	case 3:
		return "Environment=A=" + tag + " B=" + tag, ""
	case 4, 5:
		return "Environment=", "Environment= reset"
	case 6:
		return `Environment="Q=with space ` + tag + `" 'R=single "quoted"' "T=tab\there\nnewline" "V=back\\slash$dollar` + "`" + `tick"`, "Environment= quotes"
	case 7:
		return "Environment=S=%i:%I:%n:%N:%p:%P:%j:%J:%f K=%%x U=%u:%U:%g:%G", "Environment= specifiers"
	case 8:
		return "Environment=A=" + tag + " A=again-" + tag + " B=b", "Environment= repeat"
	case 9:
		return "Environment=bad-name=1 OK=" + tag + " =empty NOEQ", "Environment= invalid"
	case 10:
		return "UnsetEnvironment=A", "UnsetEnvironment="
	case 11:
		return "UnsetEnvironment=B=b KUBECONFIG=/etc/gitlab-runner/" + tag + ".yaml", "UnsetEnvironment= value"
	case 12:
		return "UnsetEnvironment=", "UnsetEnvironment= reset"
	case 13:
		return "UnsetEnvironment=KUBECONFIG A KUBECONFIG bad-name", "UnsetEnvironment="
	case 14:
		if r.IntN(2) == 0 {
			// A file that exists: in the manager's namespace only the unit
			// directories are the test's to write.
			return "EnvironmentFile=-/run/systemd/system/env-" + tag, "EnvironmentFile= read"
		}
		return "EnvironmentFile=-/etc/gitlab-runner/env-" + tag, "EnvironmentFile="
	case 15:
		return "EnvironmentFile=", "EnvironmentFile="
	case 16:
		return "ExecStart=\nExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/" + tag + ".toml --service %N", "ExecStart= reset"
	case 17:
		return "User=u-" + tag, "User="
	case 18:
		return "User=", "User="
	case 19:
		return "WorkingDirectory=/srv/" + tag, "WorkingDirectory="
	case 20:
		return "WorkingDirectory=-~", "WorkingDirectory="
	}
	return "Environment=X=" + tag, ""
}

// generateRow draws one layout.
func generateRow(r *rand.Rand, i int) diffRow {
	row := diffRow{name: fmt.Sprintf("generated row %d", i), files: map[string]realsystemd.File{}}
	feature := func(f string) { row.features = append(row.features, f) }
	template := r.IntN(3) == 0
	name := "gitlab-runner.service"
	fragName := name
	inst := ""
	if template {
		inst = instances[r.IntN(len(instances))]
		name, fragName = "gitlab-runner@"+inst+".service", "gitlab-runner@.service"
		feature("template")
	}
	row.unit = name
	content := func(tag string, lines int) string {
		var b strings.Builder
		b.WriteString("[Service]\n")
		for range lines {
			l, f := line(r, tag)
			if f != "" {
				feature(f)
			}
			if f == "EnvironmentFile= read" {
				row.files["/run/systemd/system/env-"+tag] = realsystemd.File{Content: envFileContent(tag)}
			}
			b.WriteString(l + "\n")
		}
		return b.String()
	}
	fragment := func(tag string) string {
		return "[Unit]\nDescription=GitLab Runner " + tag + "\n[Service]\n" +
			`ExecStart=/usr/bin/gitlab-runner "run" "--working-directory" "/home/gitlab-runner" "--config" "/etc/gitlab-runner/config.toml" "--service" "%p"` + "\n" +
			strings.TrimPrefix(content(tag, r.IntN(4)), "[Service]\n") +
			"[Install]\nWantedBy=multi-user.target\n"
	}
	// Fragments: none, or in one to three directories.
	var placed []string
	if r.IntN(12) == 0 {
		feature("not found")
	} else {
		for _, d := range fragmentDirs {
			if r.IntN(3) == 0 || (d == "/lib/systemd/system" && len(placed) == 0 && r.IntN(2) == 0) {
				placed = append(placed, d)
				feature(fragmentFeature[d])
			}
		}
		if len(placed) == 0 {
			placed = []string{"/lib/systemd/system"}
			feature(fragmentFeature["/lib/systemd/system"])
		}
		for _, d := range placed {
			row.files[d+"/"+fragName] = realsystemd.File{Content: fragment(dirTag(d))}
		}
		if slices.Contains(placed, "/etc/systemd/system") && slices.Contains(placed, "/lib/systemd/system") {
			feature("/etc shadows /lib")
		}
		switch top := placed[0]; r.IntN(14) {
		case 0:
			row.files[top+"/"+fragName] = realsystemd.File{Link: "/dev/null"}
			feature("masked")
		case 1:
			row.files[top+"/"+fragName] = realsystemd.File{}
			feature("empty fragment")
		case 2:
			if !slices.Contains(placed, "/etc/systemd/system") && slices.Contains(placed, "/lib/systemd/system") {
				row.files["/etc/systemd/system/"+fragName] = realsystemd.File{Link: "/lib/systemd/system/" + fragName}
				feature("link to itself")
			}
		}
		if template && r.IntN(5) == 0 {
			d := fragmentDirs[r.IntN(len(fragmentDirs))]
			row.files[d+"/"+name] = realsystemd.File{Content: fragment("instance-" + dirTag(d))}
			feature("instance file")
		}
		if template && r.IntN(3) == 0 {
			wants := "/etc/systemd/system"
			if r.IntN(3) == 0 {
				wants = "/run/systemd/system"
				feature("enabled runtime")
			}
			row.files[wants+"/multi-user.target.wants/"+name] = realsystemd.File{Link: placed[len(placed)-1] + "/" + fragName}
			feature("enabled instance")
		}
	}
	// Drop-in directories of this name, as unit_file_find_dirs() forms them.
	dirNames := []string{name + ".d", "gitlab-.service.d", "service.d"}
	kinds := []string{"drop-in name.d", "drop-in prefix.d", "drop-in service.d"}
	if template {
		dirNames = []string{name + ".d", "gitlab-runner@.service.d", "gitlab-@" + inst + ".service.d", "gitlab-@.service.d", "service.d"}
		kinds = []string{"drop-in name.d", "drop-in template.d", "drop-in prefix.d", "drop-in prefix.d", "drop-in service.d"}
	}
	names := map[string]int{}
	for n := r.IntN(7); n > 0; n-- {
		d, k := dropInDirs[r.IntN(len(dropInDirs))], r.IntN(len(dirNames))
		feature(kinds[k])
		switch d {
		case "/lib/systemd/system":
			feature("drop-in /lib")
		case "/run/systemd/system":
			feature("drop-in /run")
		case "/run/systemd/transient":
			feature("drop-in transient")
		}
		base := dropInNames[r.IntN(len(dropInNames))]
		if names[base]++; names[base] > 1 {
			feature("same name masks")
		}
		p := d + "/" + dirNames[k] + "/" + base
		tag := dirTag(d) + "-" + strings.TrimSuffix(dirNames[k], ".d") + "-" + strings.TrimSuffix(base, ".conf")
		switch r.IntN(12) {
		case 0:
			row.files[p] = realsystemd.File{Link: "/dev/null"}
			feature("drop-in /dev/null")
		case 1:
			ignored := ignoredNames[r.IntN(len(ignoredNames))]
			row.files[d+"/"+dirNames[k]+"/"+ignored] = realsystemd.File{Content: content(tag+"-ignored", 2)}
			feature("ignored file")
		default:
			row.files[p] = realsystemd.File{Content: content(tag, 1+r.IntN(3))}
		}
	}
	return row
}
