package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/checks"
)

func chain() *Report {
	return newWorld().check("b", nil).check("a", []string{"b"}).
		find("a", checks.Critical).find("b", checks.Error).build()
}

func TestJSONContract(t *testing.T) {
	var buf bytes.Buffer
	if err := Render(&buf, chain(), "json", false); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	root, child := raw.Findings[0], raw.Findings[1]
	if root["causedBy"] != nil || child["causedBy"] != "a" {
		t.Errorf("causedBy: root %v, child %v", root["causedBy"], child["causedBy"])
	}
	if ex, ok := child["explains"].([]any); !ok || len(ex) != 0 {
		t.Errorf("explains must be [] (not null) on a leaf: %v", child["explains"])
	}
	if root["severity"] != "critical" {
		t.Errorf("severity is %v, want the word", root["severity"])
	}
}

func TestTableFoldsConsequencesAndKeepsWidth(t *testing.T) {
	r := chain()
	r.Findings[1].Cause = strings.Repeat("a long cause that must wrap at spaces ", 10)
	var buf bytes.Buffer
	if err := Render(&buf, r, "table", false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"└ b", "(follows from a)", "Exit 2."} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 140 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without a TTY")
	}
}

// A cause is one line: a newline in it came with a value, and is shown as
// \n, in its cell (where go-pretty escapes the pipe) as in its section.
func TestMarkdownEscapesCells(t *testing.T) {
	r := chain()
	r.Findings[0].Cause = "a | b\nc is what was found"
	var buf bytes.Buffer
	if err := Render(&buf, r, "markdown", false); err != nil {
		t.Fatal(err)
	}
	// A word that is not plain is code: the pipe (which go-pretty escapes
	// in the cell) and the escaped newline.
	if !strings.Contains(buf.String(), "| A `\\|` `b\\nc` is what was found |") || !strings.Contains(buf.String(), "\na `|` `b\\nc` is what was found\n") {
		t.Errorf("title not escaped into one cell:\n%s", buf.String())
	}
}

func TestUnknownFormat(t *testing.T) {
	if err := Render(&bytes.Buffer{}, chain(), "xml", false); err == nil {
		t.Error("xml accepted")
	}
}
