// Package hostilefix proves that no value becomes syntax in a fix. A test
// renders a run's fixes twice: once as they are, once with every value an
// encoder is given wrapped in Mark (fixcode.SetTaint(Taint)), a string that
// ends a word, a line, a quote, a heredoc, a YAML document and a unit
// directive, and hides itself on a terminal. Compare then asserts, block
// by block, that the hostile rendering parses into exactly the structure
// of the plain one (the same commands, words, heredocs, objects, keys and
// directives), each value arriving whole where the plain one was: the
// parse of the hostile block, with Mark removed from every word and
// value, is the parse of the plain block. HoldsValues makes the same
// proof one value at a time, for a fix a test builds itself: built with
// each of hostile.Values, it reads as it does built with "plain", each
// value where "plain" was, or says why a block is withheld.
package hostilefix

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/testkit/docshape"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
)

// Mark is what Taint puts on both sides of every value: a newline, both
// quotes, command substitutions, the heredoc delimiter, a YAML document
// start, a unit's section and directive, comment and list characters, a
// bidi override and a zero-width space. It carries nothing that looks
// like a secret, so an encoder's secret guard does not refuse it.
const Mark = "\n$(touch /tmp/doctor-pwned)`touch /tmp/doctor-pwned`;&|#'\"\nEOF\n---\n[Service]\nExecStartPre=/bin/true\n{x} !^~*\u202e\u200b"

// Taint is the hostile rendering of v.
func Taint(v string) string { return Mark + v + Mark }

// Strip removes Mark from s.
func Strip(s string) string { return strings.ReplaceAll(s, Mark, "") }

// Compare fails t unless hostile is plain with every value tainted: step
// by step the same kinds, sentences equal but for Mark, and every block of
// the same structure (CompareBlock).
func Compare(t testing.TB, where string, plain, hostile checks.Steps) {
	t.Helper()
	if len(plain) != len(hostile) {
		t.Errorf("%s: %d steps, hostile values made %d:\n%s\n--- hostile:\n%s", where, len(plain), len(hostile), plain, hostile)
		return
	}
	for i := range plain {
		p, h := plain[i], hostile[i]
		at := fmt.Sprintf("%s: step %d", where, i+1)
		if p.Kind != h.Kind {
			t.Errorf("%s: a %s step became a %s step with hostile values:\n%s\n--- hostile:\n%q", at, p.Kind, h.Kind, p.Text, h.Text)
			continue
		}
		if p.Kind == checks.KindText {
			if Strip(h.Text) != p.Text {
				t.Errorf("%s: the sentence changed with hostile values:\n%s\n--- hostile:\n%q", at, p.Text, h.Text)
			}
			continue
		}
		if err := CompareBlock(p.Kind, p.Text, h.Text); err != nil {
			t.Errorf("%s: %v\n--- plain:\n%s\n--- hostile:\n%q", at, err, p.Text, h.Text)
		}
	}
}

// CompareBlock is nil when hostile, a block of kind, means what plain
// means once Mark is removed from its values.
func CompareBlock(kind checks.Kind, plain, hostile string) error {
	id := func(s string) string { return s }
	if kind == checks.KindShell {
		return compareShell(plain, hostile)
	}
	canon := docCanon(kind)
	if canon == nil { // constant blocks (Caddyfile): no value reaches them
		if plain != hostile {
			return fmt.Errorf("a %s block changed with hostile values", kind)
		}
		return nil
	}
	p, err := canon(plain, id)
	if err != nil {
		return fmt.Errorf("the plain %s block does not read: %v", kind, err)
	}
	h, err := canon(hostile, Strip)
	if err != nil {
		return fmt.Errorf("the hostile %s block does not read: %v", kind, err)
	}
	if p != h {
		return fmt.Errorf("the hostile %s block reads as\n%s\nnot\n%s", kind, h, p)
	}
	return nil
}

// docCanon is how docshape reads a document of kind, every string passed
// through a function: nil for a kind that is no document docshape reads.
func docCanon(kind checks.Kind) func(string, func(string) string) (string, error) {
	switch kind {
	case checks.KindManifest:
		return docshape.Manifest
	case checks.KindTOML:
		return docshape.TOML
	case checks.KindDropIn:
		return docshape.Unit
	}
	return nil
}

// compareShell parses both blocks as bash does: the same statements and
// commands, every word the plain word once Mark is removed, every heredoc
// the same document.
func compareShell(plain, hostile string) error {
	ps, err := shellshape.Parse(plain)
	if err != nil {
		return fmt.Errorf("the plain block does not parse: %v", err)
	}
	hs, err := shellshape.ParseWith(hostile, Strip)
	if err != nil {
		return fmt.Errorf("the hostile block does not parse: %v", err)
	}
	if len(ps.Stmts) != len(hs.Stmts) || len(ps.Words) != len(hs.Words) || len(ps.Heredocs) != len(hs.Heredocs) {
		return fmt.Errorf("hostile values changed the structure: %d statements, %d words, %d heredocs, not %d, %d, %d:\n%s\n--- not:\n%s",
			len(hs.Stmts), len(hs.Words), len(hs.Heredocs), len(ps.Stmts), len(ps.Words), len(ps.Heredocs), hs, ps)
	}
	for i, pw := range ps.Words {
		if hw := hs.Words[i]; Strip(hw) != pw {
			return fmt.Errorf("word %d is %q, not %q with the hostile marks", i+1, hs.Words[i], pw)
		}
	}
	for i, pb := range ps.Heredocs {
		hb := hs.Heredocs[i]
		var err error
		if kind := docKind(pb); kind != checks.KindText {
			err = CompareBlock(kind, pb, hb)
		} else if Strip(hb) != pb {
			err = fmt.Errorf("its text is %q, not %q", hb, pb)
		}
		if err != nil {
			return fmt.Errorf("heredoc %d: %v", i+1, err)
		}
	}
	// Each statement, its words' marks removed, is the plain one's: the
	// same commands, operators and redirections.
	if hs.String() != ps.String() {
		return fmt.Errorf("the statements differ:\n%s\n--- not:\n%s", hs, ps)
	}
	return nil
}
