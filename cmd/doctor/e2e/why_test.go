package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

const whyNow = "2026-11-29T12:00:00Z"

// A job log of the fixture whose config.toml has host set without key_file:
// the line the runner prints for it, in the colours GitLab's raw log keeps.
const hostSetLog = "Running with gitlab-runner 19.3.0 (9cbf0074)\n" +
	"\x1b[0Ksection_start:1764590400:prepare_executor\r\x1b[0K\x1b[0K\x1b[36;1mPreparing the \"kubernetes\" executor\x1b[0;m\x1b[0;m\n" +
	"\x1b[31;1mERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth\x1b[0;m\n"

func runDoctorStdin(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, cli.IO{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

// flat is s with every run of spaces and line ends one space: text as it
// reads, however it was wrapped.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

func decodeReport(t *testing.T, s string) report.Report {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal([]byte(s), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return rep
}

func TestWhyNamesTheCheckPrintsItsCauseAndRunsIt(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "host-set")
	code, out, stderr := runDoctor("why", cmdtest.WriteLog(t, hostSetLog), "--root", root, "--offline", "--now", whyNow)
	if code != report.ExitError {
		t.Errorf("exit %d, want %d (%s)\n%s", code, report.ExitError, stderr, out)
	}
	// The output wraps at 120 columns: compared with its spaces and line
	// ends as single spaces.
	for _, want := range []string{
		"job.log: 1 of its 3 lines names a check.",
		"3 ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth",
		"→ cluster-override: Nothing overrides the kubeconfig's cluster",
		"Cause: getKubeClientConfig takes the out-of-cluster branch",
		"Running cluster-override, and what it requires, on this host:",
	} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "section_start") {
		t.Errorf("the printed line keeps colours or section markers:\n%q", out)
	}
	// Only the named check and what it requires ran.
	_, js, _ := runDoctor("why", cmdtest.WriteLog(t, hostSetLog), "--root", root, "--offline", "--now", whyNow, "-o", "json")
	rep := decodeReport(t, js)
	for _, c := range rep.Checks {
		if c.ID == "pending-no-node" || c.ID == "image-pull" {
			t.Errorf("doctor why ran %s, which the log does not name", c.ID)
		}
	}
	if len(rep.Findings) == 0 || rep.Findings[0].Check != "cluster-override" {
		t.Errorf("findings %+v: cluster-override should lead", rep.Findings)
	}
	if len(rep.Matches) != 1 || !reflect.DeepEqual(rep.Matches[0], report.Match{Source: rep.Logs[0].Source, LineNumber: 3,
		Line:  "ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth",
		Check: "cluster-override"}) {
		t.Errorf("matches %+v", rep.Matches)
	}
	if rep.Logs[0].Lines != 3 || rep.Logs[0].MatchedLines != 1 {
		t.Errorf("logs %+v", rep.Logs)
	}
}

// A line that names several checks is one match per check in JSON, and
// the log comes through stdin; secrets in it are never printed.
func TestWhyReadsStdinAndListsEveryCheckALineNames(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	log := "fatal: unable to access 'https://gitlab-ci-token:glcbt-64_s3cr3tv4lue@gitlab.example.invalid/g/p.git/': Could not resolve host: gitlab.example.invalid\n" +
		"ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable\n"
	code, out, stderr := runDoctorStdin(log, "why", "-", "--root", root, "--offline", "--now", whyNow, "-o", "json")
	if code == report.ExitCantRun {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "s3cr3t") {
		t.Errorf("the token was printed:\n%s", out)
	}
	rep := decodeReport(t, out)
	var got []string
	for _, m := range rep.Matches {
		got = append(got, m.Check)
		if m.Source != "-" {
			t.Errorf("source %q, want -", m.Source)
		}
		// The DNS line has several causes: each of its checks' rows says
		// all of them and what tells them apart; the other line is sure.
		if ambiguous := m.LineNumber == 1; ambiguous != (len(m.OneOf) > 0 && m.Tell != "") {
			t.Errorf("line %d, %s: oneOf %q, tell %q", m.LineNumber, m.Check, m.OneOf, m.Tell)
		}
	}
	if want := "gitlab-reachability node-local-dns runner-service runner-kubeconfig-env kubeconfig-file"; strings.Join(got, " ") != want {
		t.Errorf("matched %v, want %s", got, want)
	}
	if m := rep.Matches[0]; len(m.OneOf) != 4 || m.OneOf[0] != "gitlab-reachability" || m.OneOf[1] != "node-local-dns" ||
		!strings.HasPrefix(m.OneOf[2], "not a doctor check: the job image's musl") {
		t.Errorf("oneOf %q", m.OneOf)
	}
}

// A line with several causes names them all, under one verdict, with what
// tells them apart: never one of them alone.
func TestWhyOfAnAmbiguousLineNamesEveryCause(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	log := "fatal: unable to access 'https://gitlab.example.invalid/g/p.git/': Could not resolve host: gitlab.example.invalid\n"
	_, out, stderr := runDoctorStdin(log, "why", "-", "--root", root, "--offline", "--now", whyNow)
	for _, want := range []string{
		"one of these causes; the line alone cannot tell which:",
		"→ gitlab-reachability: ", "→ node-local-dns: ",
		"→ not a doctor check: the job image's musl (Alpine) resolver",
		"To tell them apart: node-local-dns probes the resolver job pods use",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s%s", want, out, stderr)
		}
	}
}

// One line no check explains says so, exits 3, and guesses nothing.
func TestWhyOfALineNoCheckExplains(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	// docker CLI in a job, talking to its dind service (Ensembl/ensembl-client#121): not the runner's daemon.
	code, out, _ := runDoctorStdin("Cannot connect to the Docker daemon at tcp://docker:2375. Is the docker daemon running?\n", "why", "-", "--root", root, "--offline", "--now", whyNow)
	if code != report.ExitCantRun || !strings.Contains(out, "-: no check explains this line.") || strings.Contains(out, "→") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// A healthy log names no check and runs none; the exit code does not say
// healthy, because nothing was proved.
func TestWhyOfAHealthyLogNamesNoCheck(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	log, err := os.ReadFile("../../../testdata/logs/healthy-kubernetes-job.log")
	cmdtest.NoErr(t, err)
	code, out, _ := runDoctorStdin(string(log), "why", "-", "--root", root, "--offline", "--now", whyNow)
	if code != report.ExitCantRun {
		t.Errorf("exit %d, want %d", code, report.ExitCantRun)
	}
	if !strings.Contains(out, "-: none of its 65 lines matches a known symptom.") || strings.Contains(out, "→") {
		t.Errorf("output:\n%s", out)
	}
	_, js, _ := runDoctorStdin(string(log), "why", "-", "--root", root, "--offline", "--now", whyNow, "-o", "json")
	rep := decodeReport(t, js)
	if len(rep.Matches) != 0 || len(rep.Checks) != 0 || rep.Summary.ExitCode != report.ExitCantRun ||
		rep.Summary.Incomplete[0] != "no line of the log matches a known symptom" {
		t.Errorf("report: matches %v, checks %v, summary %+v", rep.Matches, rep.Checks, rep.Summary)
	}
}

func TestWhyRefusesWhatIsNotALogFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	cmdtest.NoErr(t, syscall.Mkfifo(fifo, 0o600))
	huge := filepath.Join(dir, "huge.log")
	cmdtest.NoErr(t, os.WriteFile(huge, nil, 0o644))
	cmdtest.NoErr(t, os.Truncate(huge, 65<<20))
	for args, want := range map[string]string{
		"why":                         "doctor why needs a log: a FILE, - for standard input, or --journal",
		"why " + dir:                  "log " + dir + " is a directory",
		"why " + fifo:                 "log " + fifo + " is a FIFO, not a regular file: pipe it in instead",
		"why " + huge:                 "log " + huge + " is 65 MiB, more than the 64 MiB doctor reads of a log",
		"why " + dir + "/missing":     "log " + dir + "/missing: no such file or directory",
		"why a b":                     "doctor why reads one log",
		"why --only namespace x":      "unknown flag: --only",
		"run --offline --log " + fifo: "is a FIFO",
		"why --journal --root " + dir: "--journal under --root " + dir + " reads the saved export /var/log/journal-export/gitlab-runner.service",
	} {
		code, _, stderr := runDoctor(strings.Fields(args)...)
		if code != report.ExitCantRun || !strings.Contains(stderr, want) {
			t.Errorf("doctor %s: exit %d, stderr %q, want 3 and %q", args, code, stderr, want)
		}
	}
}

// doctor run --log runs every check and ranks the findings of those the
// log names first, above a more severe finding it would otherwise list
// first.
func TestRunLogRanksTheNamedChecksFirst(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "guide-config-as-is")
	_, plain, _ := runDoctor("run", "--root", root, "--offline", "--now", whyNow, "-o", "json")
	base := decodeReport(t, plain)
	if len(base.Findings) < 2 || base.Findings[0].Check != "runner-kubeconfig-env" || base.Findings[len(base.Findings)-1].Check != "config-unknown-keys" {
		t.Fatalf("the fixture's findings changed: %+v", base.Findings)
	}
	log := cmdtest.WriteLog(t, "  unknown key: runners.run_untagged\n")
	code, out, stderr := runDoctor("run", "--root", root, "--offline", "--now", whyNow, "-o", "json", "--log", log)
	if code != base.Summary.ExitCode {
		t.Errorf("exit %d, without --log %d (%s)", code, base.Summary.ExitCode, stderr)
	}
	rep := decodeReport(t, out)
	if rep.Findings[0].Check != "config-unknown-keys" || rep.Findings[0].Rank != 1 || len(rep.Checks) != len(base.Checks) ||
		rep.Findings[len(rep.Findings)-1].Check != "runner-kubeconfig-env" {
		t.Errorf("with --log: findings %+v, %d checks (without: %d)", rep.Findings, len(rep.Checks), len(base.Checks))
	}
	_, table, _ := runDoctor("run", "--root", root, "--offline", "--now", whyNow, "--log", log)
	if !strings.Contains(flat(table), "job.log: 1 line names config-unknown-keys; their findings rank first.") ||
		strings.Index(table, "config-unknown-keys") > strings.Index(table, "runner-kubeconfig-env") {
		t.Errorf("table:\n%s", table)
	}
}

// Under --root, --journal reads the saved export and never runs
// journalctl: a journalctl on PATH that would leave a mark leaves none.
func TestWhyJournalUnderRootReadsTheExport(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	bin := t.TempDir()
	mark := filepath.Join(bin, "ran")
	cmdtest.NoErr(t, os.WriteFile(filepath.Join(bin, "journalctl"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755))
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	export := filepath.Join(root, "var/log/journal-export")
	cmdtest.NoErr(t, os.MkdirAll(export, 0o755))
	cmdtest.NoErr(t, os.WriteFile(filepath.Join(export, "gitlab-runner.service"), []byte(
		"Configuration loaded                                builds=0 max_builds=4\n"+
			"\x1b[31;1mERROR: Checking for jobs... forbidden               \x1b[0;m  \x1b[31;1mrunner\x1b[0;m=Zx8y1Abc \x1b[31;1mstatus\x1b[0;m=403 Forbidden\n"), 0o644))
	code, out, stderr := runDoctor("why", "--journal", "--root", root, "--offline", "--now", whyNow, "-o", "json")
	if code == report.ExitCantRun && !strings.Contains(out, "matches") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := decodeReport(t, out)
	if len(rep.Matches) != 1 || rep.Matches[0].Check != "runner-token" || rep.Matches[0].LineNumber != 2 ||
		rep.Matches[0].Source != "journal gitlab-runner.service (/var/log/journal-export/gitlab-runner.service)" {
		t.Errorf("matches %+v", rep.Matches)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("journalctl ran under --root")
	}
}

// doctor why takes the pasted line itself; when the check it names passes
// on this host, it says so. A missing file without a space is still a
// missing file.
func TestWhyTakesAPastedLine(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	line := "ERROR: Job failed: getting Kubernetes config: ca file, cert file and key file must be specified when using file based auth"
	code, out, stderr := runDoctor("why", line, "--root", root, "--offline", "--now", whyNow)
	if code != report.ExitOK || stderr != "" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"the line given names a check.",
		"1 " + line,
		"→ cluster-override: Nothing overrides the kubeconfig's cluster",
		"cluster-override passes now: what the log shows is not happening at this moment.",
	} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// On the host-set fixture the check fails: no "passes now".
	_, out, _ = runDoctor("why", line, "--root", cmdtest.FixtureRoot(t, "host-set"), "--offline", "--now", whyNow)
	if strings.Contains(out, "passes now") {
		t.Errorf("a failing check passes now:\n%s", out)
	}
	code, out, _ = runDoctor("why", "nothing a check knows about", "--root", root, "--offline", "--now", whyNow)
	if code != report.ExitCantRun || !strings.Contains(out, "the line given: no check explains this line.") {
		t.Errorf("an unknown line: exit %d\n%s", code, out)
	}
	code, _, stderr = runDoctor("why", "no-such-job.log", "--root", root, "--offline")
	if code != report.ExitCantRun || !strings.Contains(stderr, "log no-such-job.log: no such file or directory") {
		t.Errorf("a missing file: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runDoctor("why", "ERROR:", "Job", "failed", "--root", root, "--offline")
	if code != report.ExitCantRun || !strings.Contains(stderr, "one line in quotes") {
		t.Errorf("an unquoted line: exit %d, stderr %q", code, stderr)
	}
}
