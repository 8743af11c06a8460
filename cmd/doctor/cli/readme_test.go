package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

const (
	catalogStart = "<!-- catalog:start (generated from the checks; go test ./cmd/doctor/cli -run TestReadmeCatalog -update) -->\n"
	catalogEnd   = "<!-- catalog:end -->"
)

// The README links these files; the tests below keep the parts of them that
// are generated or run equal to what doctor is.
const (
	checksDoc = "../../../docs/checks.md"
	usageDoc  = "../../../docs/usage.md"
)

// TestReadmeCatalog keeps the check catalog (docs/checks.md) equal to the
// checks' own docs: every ID has its anchored section.
func TestReadmeCatalog(t *testing.T) {
	const path = checksDoc
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, catalogStart), strings.Index(s, catalogEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no catalog markers %q ... %q", path, strings.TrimSpace(catalogStart), catalogEnd)
	}
	want := CatalogMarkdown(all.Checks())
	got := s[i+len(catalogStart) : j]
	if *cmdtest.Update {
		if err := os.WriteFile(path, []byte(s[:i+len(catalogStart)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("%s's catalog differs from the checks' docs; run go test ./cmd/doctor/cli -run TestReadmeCatalog -update", path)
	}
	for _, c := range all.Checks() {
		if !strings.Contains(s, `<a id="`+c.ID+`"></a>`) {
			t.Errorf("%s has no section for %s", path, c.ID)
		}
	}
}

const (
	usageStart = "<!-- usage:start (generated from the command tree; go test ./cmd/doctor/cli -run TestReadmeUsage -update) -->\n"
	usageEnd   = "<!-- usage:end -->"
)

// TestReadmeUsage keeps the usage section (docs/usage.md) equal to cobra's
// own command tree: every command, its summary, and every flag with its help.
func TestReadmeUsage(t *testing.T) {
	const path = usageDoc
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, usageStart), strings.Index(s, usageEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no usage markers %q ... %q", path, strings.TrimSpace(usageStart), usageEnd)
	}
	want := "\n" + UsageMarkdown(CommandTree()) + "\n"
	got := s[i+len(usageStart) : j]
	if *cmdtest.Update {
		if err := os.WriteFile(path, []byte(s[:i+len(usageStart)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("%s's usage section differs from the command tree; run go test ./cmd/doctor/cli -run TestReadmeUsage -update\n--- want ---\n%s", path, want)
	}
	// The section names every command and flag of the tree.
	for _, c := range CommandTree().Commands() {
		if c.IsAvailableCommand() && !strings.Contains(got, c.CommandPath()) {
			t.Errorf("%s's usage does not name %s", path, c.CommandPath())
		}
	}
}

// TestReadmeTryIt runs the README's first command as it is written (from
// the repository's root) and compares its exit code with the one the
// README documents beside it.
func TestReadmeTryIt(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Try it\n")
	if i < 0 {
		t.Fatal("README.md has no Try it section")
	}
	var cmd []string
	want := -1
	for _, l := range strings.Split(s[i:], "\n") {
		if strings.HasPrefix(l, "    ./doctor ") && cmd == nil {
			cmd = strings.Fields(strings.TrimPrefix(l, "    ./doctor "))
		}
		if rest, ok := strings.CutPrefix(l, "    echo $?    # "); ok && cmd != nil {
			if _, err := fmt.Sscanf(rest, "%d", &want); err != nil {
				t.Fatalf("README's exit code line %q: %v", l, err)
			}
			break
		}
	}
	if cmd == nil || want < 0 {
		t.Fatalf("README's Try it has no `./doctor …` command followed by `echo $?    # N`")
	}
	for k, a := range cmd {
		if k > 0 && cmd[k-1] == "--root" {
			cmd[k] = "../../../" + a
		}
	}
	code, _, stderr := runDoctor(cmd...)
	if code != want {
		t.Errorf("README's first command exits %d, the README says %d (%s)", code, want, stderr)
	}
	if !strings.Contains(s[i:], fmt.Sprintf("exits %d", want)) {
		t.Errorf("README's Try it does not say it exits %d", want)
	}
}

// The .doctor.yaml example of docs/usage.md is a file doctor reads.
func TestReadmeDoctorYAMLExample(t *testing.T) {
	b, err := os.ReadFile(usageDoc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "### Ignores\n")
	if i < 0 {
		t.Fatal("docs/usage.md has no Ignores section")
	}
	start := strings.Index(s[i:], "```yaml\n")
	if start < 0 {
		t.Fatal("docs/usage.md's Ignores section has no yaml example")
	}
	body := s[i+start+len("```yaml\n"):]
	body = body[:strings.Index(body, "```")]
	p := filepath.Join(t.TempDir(), DoctorFile)
	cmdtest.NoErr(t, os.WriteFile(p, []byte(body), 0o644))
	igs, _, err := loadDoctorFile(p)
	if err != nil || len(igs) != 2 || igs[0].ExpiresAt.IsZero() || igs[1].Runner != "2" || igs[1].Fingerprint == "" {
		t.Errorf("docs/usage.md's example: %+v, %v", igs, err)
	}
}
