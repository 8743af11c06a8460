package hostfacts

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

func TestParseStatus(t *testing.T) {
	kernel := "Name:\tgitlab-runner\nUmask:\t0022\nUid:\t1000\t999\t999\t999\nGid:\t1000\t998\t998\t998\nFDSize:\t64\nGroups:\t4 24 27 \n"
	for name, tc := range map[string]struct {
		in      string
		want    procStatus
		wantErr string
	}{
		"as the kernel writes it": {in: kernel, want: procStatus{UID: 999, GID: 998, Groups: []int{4, 24, 27}}},
		"no groups":               {in: "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n", want: procStatus{UID: 0, GID: 0}},
		"empty":                   {in: "", wantErr: "no complete Uid line"},
		"cut inside the Uid line": {in: "Name:\tgitlab-runner\nUid:\t0\t0", wantErr: "no complete Uid line"},
		"cut after Uid":           {in: "Uid:\t0\t0\t0\t0\nGid:\t0", wantErr: "no complete Gid line"},
		"two fields":              {in: "Uid:\t0\t0\nGid:\t0\t0\t0\t0\n", wantErr: "line 1 (Uid): 2 ids, the kernel writes 4"},
		"not a number":            {in: "Uid:\tx\t0\t0\t0\nGid:\t0\t0\t0\t0\n", wantErr: `"x" is not an id`},
		"negative":                {in: "Uid:\t-1\t-1\t-1\t-1\nGid:\t0\t0\t0\t0\n", wantErr: `"-1" is not an id`},
		"(uid_t)-1 means none":    {in: "Uid:\t4294967295\t4294967295\t0\t0\nGid:\t0\t0\t0\t0\n", wantErr: "is not an id"},
		"a bad group":             {in: "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t1 x\n", wantErr: "line 3 (Groups)"},
		"two Uid lines":           {in: "Uid:\t0\t0\t0\t0\nUid:\t5\t5\t5\t5\nGid:\t0\t0\t0\t0\n", wantErr: "a second Uid line"},
		"not text":                {in: "Uid:\t0\t0\t0\t0\n\xff\xfe\n", wantErr: "not text"},
	} {
		got, err := parseStatus([]byte(tc.in))
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want one saying %q", name, err, tc.wantErr)
			}
			if got.UID != -1 || got.GID != -1 {
				t.Errorf("%s: ids %d/%d from a status that failed: unknown is -1 and UIDKnown false, never a parsed guess", name, got.UID, got.GID)
			}
		case err != nil || !reflect.DeepEqual(got, tc.want):
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, tc.want)
		}
	}
}

func TestParseCmdline(t *testing.T) {
	for name, tc := range map[string]struct {
		in      string
		want    []string
		wantErr error
	}{
		"as the kernel writes it": {in: "/usr/bin/gitlab-runner\x00run\x00", want: []string{"/usr/bin/gitlab-runner", "run"}},
		"an empty argument":       {in: "gitlab-runner\x00\x00run\x00", want: []string{"gitlab-runner", "", "run"}},
		"empty: a zombie":         {in: "", wantErr: ErrCmdlineEmpty},
		"cut":                     {in: "/usr/bin/gitlab-runner\x00run\x00--conf", wantErr: errNoFinalNUL},
		"not text":                {in: "\xff\xfe\x00", wantErr: errNotText},
	} {
		got, err := parseCmdline([]byte(tc.in))
		if !errors.Is(err, tc.wantErr) || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q, %v", name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestCheckEnviron(t *testing.T) {
	for in, wantErr := range map[string]string{
		"":                                  "",
		"A=1\x00KUBECONFIG=/k\x00":          "",
		"EMPTY=\x00":                        "",
		"A=1\x00KUBECONFIG=/etc/gitl":       "truncated",
		"A=1\x00KUBECONF":                   "truncated", // cut inside the name
		"A=1\x00no equals\x00":              "entry 2 is not NAME=value",
		"=value\x00":                        "entry 1 is not NAME=value",
		"A\xff=1\x00":                       "entry 1's name has byte 0xff",
		"A=1\x00\x00":                       "entry 2 is not NAME=value",
		"A=\xff\xfe binary values pass\x00": "",
	} {
		err := CheckEnviron([]byte(in))
		if (wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), wantErr) {
			t.Errorf("CheckEnviron(%q) = %v, want %q", in, err, wantErr)
		}
	}
}

// A gitlab-runner whose cmdline cannot be read is a runner by its comm,
// and says so; its uid comes from status all the same.
func TestReadProcessByCommAlone(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/proc/90/comm", "gitlab-runner\n")
	writeFile(t, root, "/proc/90/cmdline/x", "") // a directory where cmdline should be
	writeFile(t, root, "/proc/90/status", "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t\n")
	env := &hostio.Env{Root: root}
	p, ok := readProcess(env, 90, nil)
	if !ok || p.CmdlineErr == nil || !strings.Contains(p.CmdlineErr.Error(), "/proc/90/cmdline: is a directory") || !p.UIDKnown {
		t.Errorf("readProcess = %+v, %v; want a runner by comm, its cmdline error named, its uid known", p, ok)
	}
	// Another comm with an unreadable cmdline is no runner.
	writeFile(t, root, "/proc/91/comm", "bash\n")
	if p, ok := readProcess(env, 91, nil); ok || p != nil {
		t.Errorf("bash without a cmdline read as %+v, %v", p, ok)
	}
	// An empty cmdline has exited: not a runner, but named as a
	// gitlab-runner that is not `run`.
	writeFile(t, root, "/proc/92/comm", "gitlab-runner\n")
	writeFile(t, root, "/proc/92/cmdline", "")
	if p, ok := readProcess(env, 92, nil); ok || p == nil || !errors.Is(p.CmdlineErr, ErrCmdlineEmpty) {
		t.Errorf("an empty cmdline: %+v, %v; want not a runner, its emptiness kept", p, ok)
	}
	// The status of a process cut short: uid unknown, and why.
	writeFile(t, root, "/proc/93/cmdline", "gitlab-runner\x00run\x00")
	writeFile(t, root, "/proc/93/status", "Uid:\t0\t0")
	p, ok = readProcess(env, 93, nil)
	if !ok || p.UIDKnown || p.UID != -1 || !strings.Contains(p.UIDProblem(), "/proc/93/status: no complete Uid line") {
		t.Errorf("a cut status: %+v, %q", p, p.UIDProblem())
	}
}
