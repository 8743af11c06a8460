package fixcode_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/docshape"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// An Environment= value is read back by systemd's rules as the value it
// was given: one line, one assignment, no other directive.
func TestDropInHoldsHostileValues(t *testing.T) {
	for _, v := range hostile.UTF8() {
		text, err := fixcode.UnitSection("Service", fixcode.Environment("KUBECONFIG", v)).Text()
		if err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		lines := strings.Split(text, "\n")
		if len(lines) != 2 || lines[0] != "[Service]" || !strings.HasPrefix(lines[1], "Environment=") {
			t.Errorf("%q made more than one directive:\n%s", v, text)
			continue
		}
		words, err := docshape.SystemdWords(strings.TrimPrefix(lines[1], "Environment="))
		if err != nil || len(words) != 1 || words[0] != "KUBECONFIG="+v {
			t.Errorf("%q: systemd reads %q (%v)", v, words, err)
		}
	}
	for _, v := range []string{"esc\x1b", "cr\r", "\xff"} {
		if text, err := fixcode.UnitSection("Service", fixcode.Environment("KUBECONFIG", v)).Text(); err == nil {
			t.Errorf("%q, which systemd refuses in an environment, was written: %s", v, text)
		}
	}
}

// systemd-analyze verify takes every hostile drop-in without a word: no
// "Invalid environment assignment", no unknown key.
func TestSystemdAcceptsHostileDropIns(t *testing.T) {
	analyze := tools.Need(t, "systemd-analyze", "Debian's systemd package")
	dir := t.TempDir()
	unit := filepath.Join(dir, "gitlab-runner.service")
	if err := os.WriteFile(unit, []byte("[Unit]\nDescription=stub\n[Service]\nExecStart=/bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var entries []fixcode.Entry
	for _, v := range hostile.UTF8() {
		entries = append(entries, fixcode.Environment("V", v))
	}
	text, err := fixcode.UnitSection("Service", entries...).Text()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(unit+".d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(unit+".d", "v.conf"), []byte(text+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", "--recursive-errors=no", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s\n%s", err, out, text)
	}
}

// A TOML fragment decodes, with the runner's TOML library, to the table
// and key it was given, whatever the value.
func TestTOMLHoldsHostileValues(t *testing.T) {
	for _, v := range hostile.UTF8() {
		text, err := fixcode.TOML(fixcode.TOMLTable("runners.kubernetes", fixcode.KV{Key: "namespace", Value: v}, fixcode.KV{Key: "privileged", Value: false})).Text()
		if err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		var got map[string]any
		md, err := toml.Decode(text, &got)
		if err != nil {
			t.Errorf("%q: does not decode: %v\n%s", v, err, text)
			continue
		}
		k := got["runners"].(map[string]any)["kubernetes"].(map[string]any)
		if len(got) != 1 || len(k) != 2 || k["namespace"] != v || k["privileged"] != false || len(md.Keys()) != 3 {
			t.Errorf("%.80q decoded as %.200v (keys %v)", v, got, md.Keys())
		}
		if bad := firstUnprintable(text); bad >= 0 {
			t.Errorf("%q: a character a terminal hides at %d: %q", v, bad, text)
		}
	}
}

// A manifest decodes to exactly the objects it was given: their number,
// kinds and names, the values whole; a name that is not one is refused.
func TestManifestHoldsHostileValues(t *testing.T) {
	for _, v := range hostile.UTF8() {
		if _, err := fixcode.Manifest(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "pause"}, Description: v}).Text(); err != nil &&
			strings.Contains(err.Error(), "a terminal would not show") && firstUnprintable(strings.ReplaceAll(v, "\n", "")) >= 0 {
			// YAML writes most bidi and format characters as they are, in
			// plain scalars where no escape exists: such a manifest is
			// refused (the check below holds that none is written raw).
			continue
		}
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "pause"}, Value: -10, Description: v}
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "gitlab-runner", Namespace: "ci"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "gitlab-runner"},
			Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: v}},
		}
		text, err := fixcode.Manifest(pc, rb).Text()
		if err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		objs, err := docshape.Objects(text)
		if err != nil {
			t.Fatalf("does not decode: %v\n%s", err, text)
		}
		if len(objs) != 2 || objs[0].GetKind() != "PriorityClass" || objs[1].GetKind() != "RoleBinding" ||
			objs[0].GetName() != "pause" || objs[1].GetName() != "gitlab-runner" || objs[1].GetNamespace() != "ci" {
			t.Errorf("%q: the manifest is not the two objects:\n%s", v, text)
			continue
		}
		if d, _, _ := unstructured.NestedString(objs[0].Object, "description"); d != v {
			t.Errorf("%q: description decoded as %q", v, d)
		}
		subj, _, _ := unstructured.NestedSlice(objs[1].Object, "subjects")
		if len(subj) != 1 || subj[0].(map[string]any)["name"] != v {
			t.Errorf("%q: subjects decoded as %v", v, subj)
		}
		if bad := firstUnprintable(text); bad >= 0 {
			t.Errorf("%q: a character a terminal hides at %d", v, bad)
		}
	}
	for _, name := range []string{"x\n---", "UPPER", "a b", "", "x/y", strings.Repeat("a", 300)} {
		if _, err := fixcode.Manifest(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: name}}).Text(); err == nil && name != "" {
			t.Errorf("namespace %q was printed", name)
		}
		if _, err := fixcode.Manifest(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ci"}}).Text(); err == nil {
			t.Errorf("name %q was printed", name)
		}
	}
}

func TestNames(t *testing.T) {
	for _, ok := range []string{"gitlab-runner.service", "gitlab-runner@ci.service", "gitlab-runner@.service", `a\x2db.service`} {
		if err := fixcode.UnitName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"gitlab-runner", "x y.service", "x\n.service", "@x.service", ".service", "$(id).service"} {
		if fixcode.UnitName(bad) == nil {
			t.Errorf("%q taken for a unit name", bad)
		}
	}
	if fixcode.NamespaceName("gitlab-runner") != nil || fixcode.NamespaceName("x$(id)") == nil {
		t.Error("namespace names")
	}
}
