package systemd

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// fixture is a fake host root.
type fixture struct {
	t   *testing.T
	dir string
}

func newFixture(t *testing.T) *fixture { return &fixture{t: t, dir: t.TempDir()} }

func (f *fixture) env() *hostio.Env { return &hostio.Env{Root: f.dir} }

func (f *fixture) file(p, content string) {
	f.t.Helper()
	full := filepath.Join(f.dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) mkdir(p string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Join(f.dir, p), 0o755); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) link(p, target string) {
	f.t.Helper()
	full := filepath.Join(f.dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) load(name string) *Unit {
	f.t.Helper()
	u, err := Load(f.env(), name)
	if err != nil {
		f.t.Fatalf("Load(%s): %v", name, err)
	}
	return u
}

func noProblems(t *testing.T, u *Unit) {
	t.Helper()
	for _, p := range u.Problems {
		t.Errorf("unexpected problem: %v", p)
	}
}

// kardianosUnit is what `gitlab-runner install --user gitlab-runner
// --working-directory /home/gitlab-runner` writes: kardianos/service's
// systemdScript (service_systemd_linux.go, v1.2.x) rendered with the
// options gitlab-runner's commands/service_linux.go passes (Dependencies
// "After=network.target", Restart "always"), blank and space-only lines
// from the empty template conditionals included.
const kardianosUnit = "[Unit]\n" +
	"Description=GitLab Runner\n" +
	"ConditionFileIsExecutable=/usr/bin/gitlab-runner\n" +
	" \n" +
	"After=network.target \n" +
	"\n" +
	"[Service]\n" +
	"StartLimitInterval=5\n" +
	"StartLimitBurst=10\n" +
	`ExecStart=/usr/bin/gitlab-runner "run" "--config" "/etc/gitlab-runner/config.toml" "--working-directory" "/home/gitlab-runner" "--service" "gitlab-runner" "--user" "gitlab-runner"` + "\n" +
	"\n\n\n\n\n" +
	"Restart=always\n" +
	"\n" +
	"RestartSec=120\n" +
	"EnvironmentFile=-/etc/sysconfig/gitlab-runner\n" +
	"\n" +
	"[Install]\n" +
	"WantedBy=multi-user.target\n"

// systemctlEdit is the drop-in `sudo systemctl edit gitlab-runner` leaves.
const systemctlEdit = "### Editing /etc/systemd/system/gitlab-runner.service.d/override.conf\n" +
	"### Anything between here and the comment below will become the new contents of the file\n" +
	"\n" +
	"[Service]\n" +
	"Environment=KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml\n" +
	"\n" +
	"### Lines below this comment will be discarded\n"

func TestGitLabRunnerUnit(t *testing.T) {
	f := newFixture(t)
	f.file("/etc/systemd/system/gitlab-runner.service", kardianosUnit)
	f.file("/etc/systemd/system/gitlab-runner.service.d/override.conf", systemctlEdit)
	f.link("/etc/systemd/system/multi-user.target.wants/gitlab-runner.service", "/etc/systemd/system/gitlab-runner.service")

	u := f.load("gitlab-runner.service")
	noProblems(t, u)
	if u.Path != "/etc/systemd/system/gitlab-runner.service" || u.Masked || !u.Found() {
		t.Fatalf("Path %q masked %v", u.Path, u.Masked)
	}
	if want := []string{"/etc/systemd/system/gitlab-runner.service.d/override.conf"}; !reflect.DeepEqual(u.DropIns, want) {
		t.Errorf("DropIns = %q", u.DropIns)
	}
	want := []string{"/usr/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml", "--working-directory", "/home/gitlab-runner", "--service", "gitlab-runner", "--user", "gitlab-runner"}
	if !reflect.DeepEqual(u.ExecStart, want) {
		t.Errorf("ExecStart = %q", u.ExecStart)
	}
	if u.ExecStartSource.String() != "/etc/systemd/system/gitlab-runner.service:10" {
		t.Errorf("ExecStartSource = %v", u.ExecStartSource)
	}
	if v, ok := u.Flag("config", "c"); !ok || v != "/etc/gitlab-runner/config.toml" {
		t.Errorf("--config = %q, %v", v, ok)
	}
	if v, _ := u.Flag("user", "u"); v != "gitlab-runner" {
		t.Errorf("--user = %q", v)
	}
	if u.Type != "simple" || u.User != "" || u.ResolvedWorkingDirectory("/root") != "/" {
		t.Errorf("Type %q User %q wd %q", u.Type, u.User, u.ResolvedWorkingDirectory("/root"))
	}
	vars, origin := u.Environ()
	if vars["KUBECONFIG"] != "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml" ||
		origin["KUBECONFIG"].String() != "/etc/systemd/system/gitlab-runner.service.d/override.conf:5" {
		t.Errorf("KUBECONFIG = %q from %v", vars["KUBECONFIG"], origin["KUBECONFIG"])
	}
	if len(u.EnvironmentFiles) != 1 {
		t.Fatalf("EnvironmentFiles = %+v", u.EnvironmentFiles)
	}
	ef := u.EnvironmentFiles[0]
	if ef.Path != "/etc/sysconfig/gitlab-runner" || !ef.Optional || ef.Err != nil || ef.Source.Line != 19 {
		t.Errorf("EnvironmentFile = %+v", ef)
	}
	if !reflect.DeepEqual(u.WantedBy, []string{"multi-user.target"}) {
		t.Errorf("WantedBy = %q", u.WantedBy)
	}
	if len(u.Files) != 2 || u.Files[0].Path != u.Path || u.Files[1].Path != u.DropIns[0] || u.Files[0].ModTime.IsZero() {
		t.Errorf("Files = %+v", u.Files)
	}
	if on, links := Enabled(f.env(), "gitlab-runner.service"); !on || !reflect.DeepEqual(links, []string{"/etc/systemd/system/multi-user.target.wants/gitlab-runner.service"}) {
		t.Errorf("Enabled = %v %q", on, links)
	}
}

func TestFlagForms(t *testing.T) {
	tests := []struct {
		argv string
		want string
		ok   bool
	}{
		{`run --config /a`, "/a", true},
		{`run --config=/a`, "/a", true},
		{`run -c /a`, "/a", true},
		{`run -c=/a`, "/a", true},
		{`run -config /a`, "/a", true},
		{`run --config /a --config /b`, "/b", true},
		{`run -- --config /a`, "", false},
		{`run --config`, "", false},
		{`run --configx /a`, "", false},
		{`run --working-directory /a`, "", false},
	}
	for _, tt := range tests {
		u := parseService("ExecStart=/usr/bin/gitlab-runner " + tt.argv)
		got, ok := u.Flag("config", "-c")
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: Flag = %q, %v; want %q, %v", tt.argv, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSearchOrder(t *testing.T) {
	f := newFixture(t)
	f.file("/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/lib/runner\n")
	u := f.load("gitlab-runner.service")
	if u.Path != "/lib/systemd/system/gitlab-runner.service" || u.ExecStart[0] != "/lib/runner" {
		t.Errorf("found in /lib: %q %q", u.Path, u.ExecStart)
	}
	f.file("/run/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/run/runner\n")
	if u = f.load("gitlab-runner.service"); u.ExecStart[0] != "/run/runner" {
		t.Errorf("/run should beat /lib: %q %q", u.Path, u.ExecStart)
	}
	f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/etc/runner\n")
	u = f.load("gitlab-runner.service")
	if u.Path != "/etc/systemd/system/gitlab-runner.service" || u.ExecStart[0] != "/etc/runner" {
		t.Errorf("/etc should win: %q %q", u.Path, u.ExecStart)
	}
	noProblems(t, u)

	// Debian 12's systemd 252 is built split-usr: /lib/systemd/system
	// comes before /usr/lib/systemd/system (`systemd-analyze unit-paths`).
	f.file("/usr/lib/systemd/system/x.service", "[Service]\nExecStart=/usr/lib/x\n")
	f.file("/lib/systemd/system/x.service", "[Service]\nExecStart=/lib/x\n")
	if u = f.load("x.service"); u.ExecStart[0] != "/lib/x" {
		t.Errorf("split-usr order: %q", u.Path)
	}
}

func TestDropIns(t *testing.T) {
	f := newFixture(t)
	f.file("/usr/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\nUser=vendor\n")
	// Applied by name, regardless of directory: 10-a (/usr/lib) before 20-b (/etc).
	f.file("/usr/lib/systemd/system/gitlab-runner.service.d/10-a.conf", "[Service]\nEnvironment=A=from-10\nUser=ten\n")
	f.file("/etc/systemd/system/gitlab-runner.service.d/20-b.conf", "[Service]\nEnvironment=A=from-20\n")
	// The same name in /etc hides the one in /usr/lib.
	f.file("/etc/systemd/system/gitlab-runner.service.d/50-same.conf", "[Service]\nEnvironment=SAME=etc\n")
	f.file("/usr/lib/systemd/system/gitlab-runner.service.d/50-same.conf", "[Service]\nEnvironment=SAME=usr\n")
	// A drop-in replacing the command.
	f.file("/run/systemd/system/gitlab-runner.service.d/60-cmd.conf", "[Service]\nExecStart=\nExecStart=/opt/runner run --config /srv/config.toml\n")
	// The top-level service.d/ and the dash prefix gitlab-.service.d/.
	f.file("/usr/lib/systemd/system/service.d/05-all.conf", "[Service]\nEnvironment=ALL=1\n")
	f.file("/etc/systemd/system/gitlab-.service.d/07-prefix.conf", "[Service]\nEnvironment=PREFIX=1\n")
	// A name-specific drop-in beats a service.d/ one of the same name even
	// from a lower-precedence directory (systemd.unit(5)).
	f.file("/etc/systemd/system/service.d/70-x.conf", "[Service]\nEnvironment=X=type\n")
	f.file("/usr/lib/systemd/system/gitlab-runner.service.d/70-x.conf", "[Service]\nEnvironment=X=name\n")
	// Ignored: not *.conf, hidden (systemctl edit's temp file), backup.
	f.file("/etc/systemd/system/gitlab-runner.service.d/README", "x")
	f.file("/etc/systemd/system/gitlab-runner.service.d/.#override.conf3f2a", "[Service]\nUser=tmp\n")
	f.file("/etc/systemd/system/gitlab-runner.service.d/.hidden.conf", "[Service]\nUser=hidden\n")

	u := f.load("gitlab-runner.service")
	noProblems(t, u)
	want := []string{
		"/usr/lib/systemd/system/service.d/05-all.conf",
		"/etc/systemd/system/gitlab-.service.d/07-prefix.conf",
		"/usr/lib/systemd/system/gitlab-runner.service.d/10-a.conf",
		"/etc/systemd/system/gitlab-runner.service.d/20-b.conf",
		"/etc/systemd/system/gitlab-runner.service.d/50-same.conf",
		"/run/systemd/system/gitlab-runner.service.d/60-cmd.conf",
		"/usr/lib/systemd/system/gitlab-runner.service.d/70-x.conf",
	}
	if !reflect.DeepEqual(u.DropIns, want) {
		t.Errorf("DropIns =\n%s\nwant\n%s", strings.Join(u.DropIns, "\n"), strings.Join(want, "\n"))
	}
	vars, _ := u.Environ()
	for k, v := range map[string]string{"A": "from-20", "SAME": "etc", "ALL": "1", "PREFIX": "1", "X": "name"} {
		if vars[k] != v {
			t.Errorf("%s = %q, want %q", k, vars[k], v)
		}
	}
	if u.User != "ten" || u.UserSource.Path != "/usr/lib/systemd/system/gitlab-runner.service.d/10-a.conf" {
		t.Errorf("User = %q from %v", u.User, u.UserSource)
	}
	if !reflect.DeepEqual(u.ExecStart, []string{"/opt/runner", "run", "--config", "/srv/config.toml"}) || len(u.Commands) != 1 {
		t.Errorf("ExecStart = %q", u.ExecStart)
	}
	if v, _ := u.Flag("config"); v != "/srv/config.toml" {
		t.Errorf("config = %q", v)
	}
	if len(u.Files) != 1+len(want) {
		t.Errorf("Files = %+v", u.Files)
	}
}

func TestDropInWithoutResetAddsACommand(t *testing.T) {
	f := newFixture(t)
	f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
	f.file("/etc/systemd/system/gitlab-runner.service.d/override.conf", "[Service]\nExecStart=/opt/runner run\n")
	u := f.load("gitlab-runner.service")
	if len(u.Commands) != 2 || !hasFatal(u, "more than one ExecStart=") {
		t.Errorf("a second ExecStart= without a reset must be refused: %+v %v", u.Commands, u.Problems)
	}
}

func TestMergedUsr(t *testing.T) {
	f := newFixture(t)
	f.link("/lib", "usr/lib")
	f.file("/usr/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
	f.file("/usr/lib/systemd/system/gitlab-runner.service.d/10-a.conf", "[Service]\nUser=a\n")
	u := f.load("gitlab-runner.service")
	noProblems(t, u)
	// As systemd 252 names them on Debian 12 (merged /usr): the fragment by
	// the first search path directory that has it, /lib/systemd/system;
	// the drop-in by its directory's canonical path (chase()).
	if u.Path != "/lib/systemd/system/gitlab-runner.service" || !reflect.DeepEqual(u.DropIns, []string{"/usr/lib/systemd/system/gitlab-runner.service.d/10-a.conf"}) {
		t.Errorf("Path %q DropIns %q", u.Path, u.DropIns)
	}
}

func TestMasked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
	}{
		{"symlink to /dev/null", func(f *fixture) {
			f.link("/etc/systemd/system/gitlab-runner.service", "/dev/null")
		}},
		{"empty file", func(f *fixture) { f.file("/etc/systemd/system/gitlab-runner.service", "") }},
		{"relative link to /dev/null", func(f *fixture) {
			f.link("/etc/systemd/system/gitlab-runner.service", "../../../dev/null")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.file("/usr/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
			tc.setup(f)
			u := f.load("gitlab-runner.service")
			if !u.Masked || u.Path != "/etc/systemd/system/gitlab-runner.service" || u.ExecStart != nil {
				t.Errorf("masked %v path %q ExecStart %q", u.Masked, u.Path, u.ExecStart)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	f := newFixture(t)
	u := f.load("gitlab-runner.service")
	if u.Found() || u.Path != "" || u.Masked || len(u.Problems) != 0 {
		t.Errorf("%+v", u)
	}
	if _, err := Load(f.env(), "gitlab-runner"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("invalid name: %v", err)
	}
	if _, err := Load(f.env(), "../../etc/passwd.service"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("path as name: %v", err)
	}
}

func TestAliasesAndLinks(t *testing.T) {
	t.Run("alias to another name", func(t *testing.T) {
		f := newFixture(t)
		f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
		f.link("/etc/systemd/system/gitlab-ci-multi-runner.service", "gitlab-runner.service")
		f.file("/etc/systemd/system/gitlab-ci-multi-runner.service.d/old.conf", "[Service]\nUser=legacy\n")
		u := f.load("gitlab-ci-multi-runner.service")
		noProblems(t, u)
		if u.Path != "/etc/systemd/system/gitlab-runner.service" || !reflect.DeepEqual(u.Aliases, []string{"gitlab-runner.service"}) {
			t.Errorf("Path %q Aliases %q", u.Path, u.Aliases)
		}
		// Drop-ins of every name apply (systemd.unit(5): "dropins for the
		// aliased name and all aliases are loaded").
		u = f.load("gitlab-runner.service")
		if u.User != "legacy" || !reflect.DeepEqual(u.Aliases, []string{"gitlab-ci-multi-runner.service"}) {
			t.Errorf("User %q Aliases %q", u.User, u.Aliases)
		}
	})
	t.Run("linked unit outside the search path, absolute target under the root", func(t *testing.T) {
		f := newFixture(t)
		f.file("/opt/runner/gitlab-runner.service", "[Service]\nExecStart=/opt/runner/bin run\n")
		f.link("/etc/systemd/system/gitlab-runner.service", "/opt/runner/gitlab-runner.service")
		u := f.load("gitlab-runner.service")
		noProblems(t, u)
		if u.Path != "/etc/systemd/system/gitlab-runner.service" || u.ExecStart[0] != "/opt/runner/bin" {
			t.Errorf("Path %q ExecStart %q", u.Path, u.ExecStart)
		}
	})
	t.Run("link to the same name lower down is ignored", func(t *testing.T) {
		f := newFixture(t)
		f.file("/usr/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
		f.link("/etc/systemd/system/gitlab-runner.service", "/usr/lib/systemd/system/gitlab-runner.service")
		u := f.load("gitlab-runner.service")
		if u.Path != "/usr/lib/systemd/system/gitlab-runner.service" {
			t.Errorf("Path %q", u.Path)
		}
	})
	t.Run("dangling link", func(t *testing.T) {
		f := newFixture(t)
		f.link("/etc/systemd/system/gitlab-runner.service", "/opt/gone.service")
		u := f.load("gitlab-runner.service")
		if u.Path != "/etc/systemd/system/gitlab-runner.service" || !hasFatal(u, "cannot open") {
			t.Errorf("Path %q problems %v", u.Path, u.Problems)
		}
	})
	t.Run("dangling alias", func(t *testing.T) {
		f := newFixture(t)
		f.link("/etc/systemd/system/gitlab-runner.service", "gone.service")
		u := f.load("gitlab-runner.service")
		if u.Found() || len(u.Problems) != 1 || u.Problems[0].Source.Path != "/etc/systemd/system/gitlab-runner.service" {
			t.Errorf("Path %q problems %v", u.Path, u.Problems)
		}
	})
	t.Run("symlink loop", func(t *testing.T) {
		f := newFixture(t)
		f.link("/opt/a", "/opt/b")
		f.link("/opt/b", "/opt/a")
		f.link("/etc/systemd/system/gitlab-runner.service", "/opt/a")
		u := f.load("gitlab-runner.service")
		if !hasFatal(u, "symbolic links") {
			t.Errorf("problems %v", u.Problems)
		}
	})
	t.Run("template serves an instance", func(t *testing.T) {
		f := newFixture(t)
		f.file("/usr/lib/systemd/system/gitlab-runner@.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/%i.toml\nUser=%i\n")
		f.file("/etc/systemd/system/gitlab-runner@.service.d/10.conf", "[Service]\nEnvironment=T=1\n")
		f.file("/etc/systemd/system/gitlab-runner@ci.service.d/20.conf", "[Service]\nEnvironment=I=1\n")
		u := f.load("gitlab-runner@ci.service")
		noProblems(t, u)
		if v, _ := u.Flag("config"); v != "/etc/gitlab-runner/ci.toml" || u.User != "ci" || len(u.DropIns) != 2 {
			t.Errorf("config %q user %q dropins %q aliases %q", v, u.User, u.DropIns, u.Aliases)
		}
	})
}

func TestEnabled(t *testing.T) {
	f := newFixture(t)
	f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
	if on, links := Enabled(f.env(), "gitlab-runner.service"); on || links != nil {
		t.Errorf("no link: %v %q", on, links)
	}
	// A copy instead of a symlink does not count.
	f.file("/etc/systemd/system/default.target.wants/gitlab-runner.service", "x")
	if on, _ := Enabled(f.env(), "gitlab-runner.service"); on {
		t.Error("a regular file in .wants counted")
	}
	f.link("/etc/systemd/system/multi-user.target.wants/gitlab-runner.service", "/etc/systemd/system/gitlab-runner.service")
	f.link("/usr/lib/systemd/system/graphical.target.requires/gitlab-runner.service", "../gitlab-runner.service")
	on, links := Enabled(f.env(), "gitlab-runner.service")
	want := []string{"/etc/systemd/system/multi-user.target.wants/gitlab-runner.service", "/usr/lib/systemd/system/graphical.target.requires/gitlab-runner.service"}
	if !on || !reflect.DeepEqual(links, want) {
		t.Errorf("Enabled = %v %q", on, links)
	}
}

func hasFatal(u *Unit, msg string) bool {
	for _, p := range u.Problems {
		if p.Fatal && strings.Contains(p.Message, msg) {
			return true
		}
	}
	return false
}

// A drop-in linked to /dev/null masks the vendor's drop-in of that name
// (systemd.unit(5), Examples) and is no Problem.
func TestDropInMask(t *testing.T) {
	f := newFixture(t)
	f.file("/usr/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
	f.file("/usr/lib/systemd/system/gitlab-runner.service.d/10-vendor.conf", "[Service]\nUser=vendor\n")
	f.link("/etc/systemd/system/gitlab-runner.service.d/10-vendor.conf", "/dev/null")
	u := f.load("gitlab-runner.service")
	noProblems(t, u)
	if u.User != "" || !reflect.DeepEqual(u.DropIns, []string{"/etc/systemd/system/gitlab-runner.service.d/10-vendor.conf"}) {
		t.Errorf("User %q DropIns %q", u.User, u.DropIns)
	}
}
