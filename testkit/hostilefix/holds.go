package hostilefix

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
)

// WithheldPrefix begins the sentence that stands where a block is not
// printed (checks.Withheld): an encoder or a rule refused it.
const WithheldPrefix = "doctor prints no command here: "

// WithheldStep says whether st is the sentence that stands for a block an
// encoder or a rule refused.
func WithheldStep(st checks.Step) bool {
	return st.Kind == checks.KindText && strings.HasPrefix(st.Text, WithheldPrefix)
}

// Withheld says whether steps print no command: sentences only, one of
// them saying why (WithheldStep).
func Withheld(steps checks.Steps) bool {
	said := false
	for _, st := range steps {
		if st.Kind != checks.KindText {
			return false
		}
		said = said || WithheldStep(st)
	}
	return said
}

// MustShape is text as bash parses it (shellshape.Parse); t fails now if
// it does not parse.
func MustShape(t testing.TB, text string) *shellshape.Shape {
	t.Helper()
	s, err := shellshape.Parse(text)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	return s
}

// BlockShape is MustShape of a step that is a shell block; t fails now if
// it is none.
func BlockShape(t testing.TB, st checks.Step) *shellshape.Shape {
	t.Helper()
	if st.Kind != checks.KindShell {
		t.Fatalf("not a shell block: %+v", st)
	}
	return MustShape(t, st.Text)
}

// ShapeErr is nil when got, a shell block built with v where benign was
// built with "plain", parses to benign's structure (as many statements,
// words and heredocs), every word benign's with "plain" replaced by v: v
// arrived as data, whole, where "plain" did. A command substitution's
// words are shown Go-quoted in the word that holds it (and each is also a
// word of its own, compared as it is), so there v is Go-quoted too.
func ShapeErr(v, benign, got string) error {
	want, err := shellshape.Parse(benign)
	if err != nil {
		return fmt.Errorf("the benign block does not parse: %v\n%s", err, benign)
	}
	g, err := shellshape.Parse(got)
	if err != nil {
		return fmt.Errorf("the block does not parse: %v\n%s", err, got)
	}
	if len(g.Stmts) != len(want.Stmts) || len(g.Words) != len(want.Words) || len(g.Heredocs) != len(want.Heredocs) {
		return fmt.Errorf("changed the structure:\n%s\nparsed as\n%s\nnot like\n%s", got, g, want)
	}
	var errs []error
	for i, w := range want.Words {
		with := v
		if strings.HasPrefix(w, "⟨$(") {
			with = strings.TrimSuffix(strings.TrimPrefix(strconv.Quote(v), `"`), `"`)
		}
		if gw, ww := g.Words[i], strings.ReplaceAll(w, "plain", with); gw != ww {
			errs = append(errs, fmt.Errorf("word %d is %q, want %q", i, gw, ww))
		}
	}
	for i, wb := range want.Heredocs {
		if err := bodyErr(v, wb, g.Heredocs[i]); err != nil {
			errs = append(errs, fmt.Errorf("heredoc %d: %v", i+1, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w\n%s", errors.Join(errs...), got)
	}
	return nil
}

// bodyErr is nil when got, a heredoc's body built with v, reads as want,
// built with "plain", with "plain" replaced by v: a document as docshape
// reads its kind (docKind), other text as it is; a document no value
// reaches is the same text (blockErr).
func bodyErr(v, want, got string) error {
	if kind := docKind(want); kind != checks.KindText {
		return blockErr(v, checks.Step{Kind: kind, Text: want}, checks.Step{Kind: kind, Text: got})
	}
	if w := strings.ReplaceAll(want, "plain", v); got != w {
		return fmt.Errorf("its text is %q, not %q", got, w)
	}
	return nil
}

// docKind is the kind of document a heredoc's body is (a manifest, a
// drop-in, a TOML fragment), or KindText.
func docKind(body string) checks.Kind {
	switch {
	case strings.Contains(body, "apiVersion:"):
		return checks.KindManifest
	case strings.HasPrefix(body, "[Service]") || strings.HasPrefix(body, "[Unit]"):
		return checks.KindDropIn
	case strings.HasPrefix(body, "["):
		return checks.KindTOML
	}
	return checks.KindText
}

// SameShape fails t unless ShapeErr(v, benign, got) is nil; a benign
// block that does not parse fails it now.
func SameShape(t testing.TB, v, benign, got string) {
	t.Helper()
	if _, err := shellshape.Parse(benign); err != nil {
		t.Fatalf("benign block does not parse: %v\n%s", err, benign)
	}
	if err := ShapeErr(v, benign, got); err != nil {
		t.Errorf("%q: %v", v, err)
	}
}

// SameBlock is SameShape of two steps that are shell blocks; a benign one
// that is none fails t now.
func SameBlock(t testing.TB, v string, benign, got checks.Step) {
	t.Helper()
	if benign.Kind != checks.KindShell {
		t.Fatalf("the benign step is not a shell block: %+v", benign)
	}
	if got.Kind != checks.KindShell {
		t.Errorf("%q: not a shell block: %+v", v, got)
		return
	}
	SameShape(t, v, benign.Text, got.Text)
}

// blockErr is nil when got, a block built with v, reads as want, built
// with "plain", with "plain" replaced by v in every word and value: shell
// by ShapeErr, a document as docshape reads its kind (and one "plain" is
// not in, which no value reaches, as its text), a constant block
// (Caddyfile) as its text.
func blockErr(v string, want, got checks.Step) error {
	if got.Kind != want.Kind {
		return fmt.Errorf("a %s block where the benign fix has a %s block", got.Kind, want.Kind)
	}
	if want.Kind == checks.KindShell {
		return ShapeErr(v, want.Text, got.Text)
	}
	if !strings.Contains(want.Text, "plain") && got.Text != want.Text {
		return fmt.Errorf("a %s block no value reaches changed:\n%s\nnot\n%s", got.Kind, got.Text, want.Text)
	}
	canon := docCanon(want.Kind)
	if canon == nil {
		if w := strings.ReplaceAll(want.Text, "plain", v); got.Text != w {
			return fmt.Errorf("the block is\n%s\nnot\n%s", got.Text, w)
		}
		return nil
	}
	w, err := canon(want.Text, func(s string) string { return strings.ReplaceAll(s, "plain", v) })
	if err != nil {
		return fmt.Errorf("the benign %s block does not read: %v\n%s", want.Kind, err, want.Text)
	}
	g, err := canon(got.Text, func(s string) string { return s })
	if err != nil {
		return fmt.Errorf("the %s block does not read: %v\n%s", got.Kind, err, got.Text)
	}
	if g != w {
		return fmt.Errorf("the %s block reads as\n%s\nnot\n%s", got.Kind, g, w)
	}
	return nil
}

// HoldsValues fails t unless, for each of values, every block build(v)
// renders reads as the block build("plain") renders in its place, with
// "plain" replaced by v word for word (blockErr): v arrives as data,
// whole. A block may instead be left out, a sentence saying why
// (WithheldStep) standing for it; other sentences are prose. When build(v)
// has as many steps as build("plain"), they are compared step by step;
// else its blocks, in order, with the benign ones. It returns how many
// values were printed in a block.
func HoldsValues(t testing.TB, values []string, build func(v string) checks.Steps) (printed int) {
	t.Helper()
	benign := build("plain")
	want := benign.Blocks()
	if len(want) == 0 {
		t.Fatalf("the benign fix has no block: %q", benign)
	}
	for _, v := range values {
		got := build(v)
		var blocks int
		if len(got) == len(benign) {
			blocks = stepByStep(t, v, benign, got)
		} else {
			blocks = inOrder(t, v, want, got)
		}
		if blocks > 0 {
			printed++
		}
	}
	return printed
}

// stepByStep compares got, built with v, with benign step by step: a
// block is the benign block or the sentence that withholds it, a sentence
// stays one. It returns how many blocks got has.
func stepByStep(t testing.TB, v string, benign, got checks.Steps) (blocks int) {
	t.Helper()
	for i, st := range got {
		switch b := benign[i]; {
		case b.Kind == checks.KindText:
			if st.Kind != checks.KindText {
				t.Errorf("%q: step %d is a %s block where the benign fix has a sentence: %q", v, i+1, st.Kind, got)
			}
		case st.Kind == checks.KindText:
			if !WithheldStep(st) {
				t.Errorf("%q: step %d is a sentence that does not say why the block is withheld: %q", v, i+1, st.Text)
			}
		default:
			blocks++
			if err := blockErr(v, b, st); err != nil {
				t.Errorf("%q: step %d: %v", v, i+1, err)
			}
		}
	}
	return blocks
}

// inOrder compares got's blocks, built with v, in order with want, the
// benign ones; fewer need a sentence saying why. It returns how many
// blocks got has.
func inOrder(t testing.TB, v string, want, got checks.Steps) (blocks int) {
	t.Helper()
	said := false
	for i, st := range got {
		if st.Kind == checks.KindText {
			said = said || WithheldStep(st)
			continue
		}
		if blocks == len(want) {
			t.Errorf("%q: more blocks than the benign fix: %q", v, got)
			return blocks
		}
		if err := blockErr(v, want[blocks], st); err != nil {
			t.Errorf("%q: step %d: %v", v, i+1, err)
		}
		blocks++
	}
	if blocks < len(want) && !said {
		t.Errorf("%q: %d of the benign fix's %d blocks, and no sentence says why: %q", v, blocks, len(want), got)
	}
	return blocks
}

// HoldsNames fails t unless build(v), for each of values, prints no
// command when valid(v) refuses v as a name (Withheld), and otherwise
// reads as build("plain") with v in its place (HoldsValues), printed.
func HoldsNames(t testing.TB, values []string, valid func(string) error, build func(v string) checks.Steps) {
	t.Helper()
	var names []string
	for _, v := range values {
		if valid(v) == nil {
			names = append(names, v)
		} else if got := build(v); !Withheld(got) {
			t.Errorf("%q, which is no name, was printed: %q", v, got)
		}
	}
	if n := HoldsValues(t, names, build); n != len(names) {
		t.Errorf("%d of %d names printed", n, len(names))
	}
}

// Printable are the hostile.Values v for which an encoder prints every
// word of words(v): none holds a NUL or looks like a secret (fixcode
// refuses both). A fix that carries v as data prints each of them.
func Printable(words func(v string) []string) []string {
	var out []string
	for _, v := range hostile.Values {
		if _, err := fixcode.Commands(fixcode.Command("true", words(v)...)).Render(); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// PathValues are the Printable values v (v itself and at(v)) for which
// at(v) is a path that is itself: path.Clean keeps it (not so with "" or
// ".." between slashes). A fix of a path of the runner's own, and of v as
// its user, prints each.
func PathValues(at func(v string) string) []string {
	var out []string
	for _, v := range Printable(func(v string) []string { return []string{v, at(v)} }) {
		if p := at(v); path.Clean(p) == p {
			out = append(out, v)
		}
	}
	return out
}

// OneKeyTOML fails t unless st, built with v, is a TOML block of one
// table and one key (two lines) that the runner's TOML library
// (BurntSushi/toml) reads back as want, with no character a terminal
// hides written raw.
func OneKeyTOML(t testing.TB, v string, st checks.Step, want map[string]any) {
	t.Helper()
	if st.Kind != checks.KindTOML {
		t.Errorf("%q: %+v", v, st)
		return
	}
	if n := strings.Count(st.Text, "\n"); n != 1 {
		t.Errorf("%q: %d lines:\n%s", v, n+1, st.Text)
	}
	for _, r := range st.Text {
		if r != '\n' && !unicode.IsPrint(r) {
			t.Errorf("%q: %U written raw:\n%s", v, r, st.Text)
		}
	}
	var got map[string]any
	if _, err := toml.Decode(st.Text, &got); err != nil {
		t.Errorf("%q: does not decode: %v\n%s", v, err, st.Text)
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("%q: decodes as %#v\n%s", v, got, st.Text)
	}
}

// KubectlOf is kubectl aimed at a cluster as kubefacts.KubeContext.Kubectl
// builds it: KUBECONFIG=kubeconfig kubectl --context context.
func KubectlOf(kubeconfig, context string) fixcode.Cmd {
	return fixcode.Command("kubectl", "--context", context).Env("KUBECONFIG", fixcode.Data(kubeconfig))
}

// Kubectl is KubectlOf with a host's value v in its kubeconfig's path
// (/etc/gitlab-runner/v) and as its context.
func Kubectl(v string) fixcode.Cmd { return KubectlOf("/etc/gitlab-runner/"+v, v) }

// KubectlValues are the Printable values of Kubectl: a fix that carries
// it as data prints each of them.
func KubectlValues() []string {
	return Printable(func(v string) []string { return []string{v, "/etc/gitlab-runner/" + v} })
}

// InTOML says whether the TOML encoder prints v: UTF-8 (all a TOML
// string holds), no NUL, nothing that looks like a secret.
func InTOML(v string) bool {
	return utf8.ValidString(v) && !strings.Contains(v, "\x00") && !redact.Secretlike(v)
}

// TOMLString is v as a TOML basic string, as BurntSushi/toml (the
// runner's TOML library) writes it: what a test puts after "key = " in a
// config.toml.
func TOMLString(t testing.TB, v string) string {
	t.Helper()
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(map[string]string{"k": v}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(strings.TrimPrefix(b.String(), "k = "))
}
