package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// cobra's __complete answers with one candidate a line (value, a tab, its
// description) and :directive last.
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errs := runDoctor(append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, errs)
	}
	var vals []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, ":") {
			continue
		}
		v, _, _ := strings.Cut(l, "\t")
		vals = append(vals, v)
	}
	return vals
}

func has(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestCompletionOfCheckIDs(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		want, none string
	}{
		{[]string{"run", "--only", "cert-"}, "cert-expiry", "api-auth"},
		{[]string{"run", "--skip", "kube"}, "kubeconfig-file", "cert-expiry"},
		// A list completes its last element and keeps what came before.
		{[]string{"run", "--only", "config-decode,cert-"}, "config-decode,cert-expiry", "cert-expiry"},
		{[]string{"run", "--only", "config-decode,config-"}, "config-decode,config-lint", "config-decode,config-decode"},
		{[]string{"run", "--ignore", "cert-"}, "cert-expiry:", "cert-expiry"},
		{[]string{"explain", "cert-"}, "cert-expiry", "api-auth"},
		{[]string{"explain", ""}, "runner-process", ""},
		{[]string{"run", "-o", ""}, "yaml", ""},
		{[]string{"checks", "-o", "j"}, "json", ""},
		{[]string{"completion", ""}, "bash", ""},
		{[]string{"help", "r"}, "run", "checks"},
		{[]string{"ch"}, "checks", "run"},
	} {
		got := completions(t, tc.args...)
		if !has(got, tc.want) || tc.none != "" && has(got, tc.none) {
			t.Errorf("completing %q: %q, want %q and not %q", tc.args, got, tc.want, tc.none)
		}
	}
	if got := completions(t, "explain", "cert-expiry", ""); len(got) != 0 {
		t.Errorf("explain takes one ID, yet a second is offered: %q", got)
	}
}

// The bash script cobra generates parses, and once loaded completes
// `doctor run --only cert-` through the real binary's __complete.
func TestBashCompletionScript(t *testing.T) {
	bash := tools.Need(t, "bash", "Debian's bash package")
	code, script, errs := runDoctor("completion", "bash")
	if code != 0 || errs != "" {
		t.Fatalf("completion bash: exit %d: %s", code, errs)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "doctor.bash")
	cmdtest.NoErr(t, os.WriteFile(file, []byte(script), 0o644))
	if out, err := exec.Command(bash, "-n", file).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	for shell, want := range map[string]string{"zsh": "compdef", "fish": "complete -c doctor"} {
		code, s, _ := runDoctor("completion", shell)
		if code != 0 || !strings.Contains(s, want) {
			t.Errorf("completion %s: exit %d, no %q", shell, code, want)
		}
		if path, err := exec.LookPath(shell); err == nil && shell == "zsh" {
			f := filepath.Join(dir, "doctor."+shell)
			cmdtest.NoErr(t, os.WriteFile(f, []byte(s), 0o644))
			if out, err := exec.Command(path, "-n", f).CombinedOutput(); err != nil {
				t.Errorf("zsh -n: %v\n%s", err, out)
			}
		}
	}

	// cobra's bash script stands on the bash-completion package
	// (_get_comp_words_by_ref), as its own help says.
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		tools.Missing(t, "the bash-completion package is not installed ("+bashCompletion+": apt-get install bash-completion)")
	}
	bin := cmdtest.BuildDoctor(t)
	complete := func(line string) []string {
		t.Helper()
		driver := `source ` + bashCompletion + `
source "$1"
COMP_LINE="$2"
COMP_POINT=${#COMP_LINE}
read -r -a COMP_WORDS <<< "$2"
[[ "$2" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
__start_doctor doctor "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", driver, "driver", file, line)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stderr strings.Builder
		cmd.Stderr = &stderr // compopt complains outside a real completion
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s%s", line, err, out, stderr.String())
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				got = append(got, l)
			}
		}
		return got
	}
	if got := complete("doctor run --only cert-"); !has(got, "cert-expiry") {
		t.Errorf("bash completes `doctor run --only cert-` to %q, want cert-expiry", got)
	}
	if got := complete("doctor explain cert-"); !has(got, "cert-expiry") {
		t.Errorf("bash completes `doctor explain cert-` to %q, want cert-expiry", got)
	}
	if got := complete("doctor chec"); !has(got, "checks") {
		t.Errorf("bash completes `doctor chec` to %q, want checks", got)
	}
}
